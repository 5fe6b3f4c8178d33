// The bound on an API key's name, shared by the endpoint's schema (POST /api/keys) and the
// settings page's field, which stops there; nothing else here, so the page's bundle can
// import it.

/** Characters in an API key's name at most (after trimming; at least one). */
export const KEY_NAME_MAX_LENGTH = 100;
