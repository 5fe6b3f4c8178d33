#include <string.h>
#include "widget.h"

static struct widget widgets[] = {
    { "sprocket", 3 },
    { "gear", 5 },
    { "flange", 8 },
};

int widget_count(void)
{
    return sizeof(widgets) / sizeof(widgets[0]);
}

struct widget *widget_find(const char *name)
{
    for (int i = 0; i < widget_count(); i++)
        if (strcmp(widgets[i].name, name) == 0)
            return &widgets[i];
    return NULL;
}
