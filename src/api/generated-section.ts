// A part of a hand-written page that `npm run generate` keeps up to date: the text between two
// marker comments is replaced, the rest of the page is left as it is.

export interface GeneratedSection {
  begin: string;
  end: string;
  /** The section, markers included. */
  content: () => string;
}

/** `text` with the part between the section's markers replaced by its current content. */
export function withSection(text: string, section: GeneratedSection): string {
  const begin = text.indexOf(section.begin);
  const end = text.indexOf(section.end);
  if (begin < 0 || end < begin) throw new Error(`missing ${section.begin} ... ${section.end} markers`);
  return text.slice(0, begin) + section.content() + text.slice(end + section.end.length);
}
