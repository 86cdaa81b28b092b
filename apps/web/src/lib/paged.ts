/** A page of a list endpoint (skip and take paging, spec section 9). */
export type Paged<T> = { items: T[]; total: number; skip: number; take: number };

export const PAGE_SIZE = 20;

export function pageQuery(page: number, extra: Record<string, string | null | undefined> = {}): string {
  const params = new URLSearchParams({ skip: String((page - 1) * PAGE_SIZE), take: String(PAGE_SIZE) });
  for (const [key, value] of Object.entries(extra)) if (value) params.set(key, value);
  return params.toString();
}
