type Text = { type: 'text'; text: string };

/** The text items of a tool result, one a line. */
export const textOf = (r: { content?: unknown }): string =>
  ((r.content ?? []) as Text[])
    .filter((c) => c.type === 'text')
    .map((c) => c.text)
    .join('\n');
