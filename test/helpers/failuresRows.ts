// The failures table of a batch page, read back from its HTML: each row's cells as text (tags
// dropped, entities decoded) and the link of its first cell. The page's markup is our own, so a
// few patterns read it; what the cells hold is user data, decoded here to compare with the input.

const ENTITIES: Readonly<Record<string, string>> = { amp: '&', lt: '<', gt: '>', quot: '"', '#39': "'" };
const decode = (html: string): string =>
  html.replace(/<[^>]*>/g, '').replace(/&(amp|lt|gt|quot|#39);/g, (_, e: string) => ENTITIES[e]!);

export interface FailureRow {
  cells: string[];
  href: string | undefined;
}

/** The rows of `<table id="failures">`, in page order; undefined when the page has no such table. */
export function failuresRows(html: string): FailureRow[] | undefined {
  const table = /<table id="failures">.*?<tbody>(.*?)<\/tbody><\/table>/s.exec(html);
  if (table === null) return undefined;
  return [...table[1]!.matchAll(/<tr[^>]*>(.*?)<\/tr>/gs)].map((tr) => {
    const cells = [...tr[1]!.matchAll(/<td[^>]*>(.*?)<\/td>/gs)].map((td) => td[1]!);
    return { cells: cells.map(decode), href: /^<a href="([^"]*)">/.exec(cells[0] ?? '')?.[1] };
  });
}
