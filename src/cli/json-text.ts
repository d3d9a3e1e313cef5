import { escapeForDisplay } from '../escape-for-display.js';

/** JSON for the terminal: still the same JSON, with every character that could act on a terminal as `\uXXXX`. */
export const jsonText = (value: unknown, indent?: number): string =>
  escapeForDisplay(JSON.stringify(value, null, indent), { multiline: true, json: true });
