"""Prints a report of the widgets a build produced."""

import sys


class WidgetReport:
    def __init__(self, counts):
        self.counts = counts

    def total(self):
        return sum(self.counts.values())


def widget_count(lines):
    return len([line for line in lines if line.startswith("widget ")])


if __name__ == "__main__":
    print(WidgetReport({"sprocket": widget_count(sys.stdin)}).total())
