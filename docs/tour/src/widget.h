#ifndef WIDGET_H
#define WIDGET_H

struct widget {
    const char *name;
    int size;
};

int widget_count(void);
struct widget *widget_find(const char *name);

#endif
