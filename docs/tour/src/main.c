#include <stdio.h>
#include "widget.h"

int main(void)
{
    struct widget *w = widget_find("gear");
    printf("%d widgets; gear size %d\n", widget_count(), w ? w->size : -1);
    return 0;
}
