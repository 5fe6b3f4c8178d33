// The settings page's default search context: the context (GET /api/contexts) the signed-in
// user's searches are limited to when they name none, read with GET /api/default_context
// and saved with PUT /api/default_context. "None" searches every repository the user may see.

import { apiJson, postJson } from './api.ts';
import { h } from './dom.ts';

interface Listed {
  name: string;
  description?: string;
}

export function defaultContextSection(): HTMLElement {
  const heading = h('h2', { id: 'default-context-title' }, 'Default search context');
  const select = h('select', { id: 'default-context', disabled: true }, h('option', { value: '' }, 'None: every repository'));
  const save = h('button', { type: 'submit', disabled: true }, 'Save');
  const status = h('p', { class: 'status', id: 'default-context-status', role: 'status' });
  const error = h('p', { class: 'form-error', id: 'default-context-error', role: 'alert' });
  const form = h('form', { class: 'limit-form', id: 'default-context-form' }, h('label', { for: 'default-context' }, 'Search in '), select, ' ', save);
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    void (async () => {
      error.textContent = '';
      try {
        const now = await apiJson<{ context: string | null }>('/api/default_context', postJson({ context: select.value || null }, {}, 'PUT'));
        status.textContent =
          now.context === null
            ? 'Saved: your searches cover every repository unless they name a context.'
            : `Saved: your searches are limited to ${now.context} unless they name another context.`;
      } catch (err) {
        error.textContent = `The default context could not be saved: ${(err as Error).message}`;
      }
    })();
  });

  void (async () => {
    try {
      const [contexts, mine] = await Promise.all([apiJson<Listed[]>('/api/contexts'), apiJson<{ context: string | null }>('/api/default_context')]);
      select.append(
        ...contexts.map((c) => {
          const o = h('option', { value: c.name }, c.description ? `${c.name}: ${c.description}` : c.name);
          return o;
        }),
      );
      select.value = mine.context ?? '';
      select.disabled = false;
      save.disabled = false;
    } catch (err) {
      error.textContent = `The search contexts could not be loaded: ${(err as Error).message}`;
    }
  })();

  return h(
    'section',
    { class: 'settings-section', 'aria-labelledby': 'default-context-title' },
    heading,
    h('p', { class: 'hint' }, 'Your searches are limited to this context when their query names none; context:global in a query searches everything.'),
    form,
    status,
    error,
  );
}
