/** Turns list parameters into a query string, leaving out what is undefined. */
export const toQueryString = (
  params: Readonly<Record<string, string | number | boolean | undefined>>,
): string => {
  const search = new URLSearchParams();
  for (const [key, value] of Object.entries(params)) {
    if (value !== undefined) search.set(key, String(value));
  }
  const text = search.toString();
  return text === '' ? '' : `?${text}`;
};

/** One path segment from an id given by the caller: never lets `../` or `?` change the route. */
export const segment = (id: string): string => encodeURIComponent(id);
