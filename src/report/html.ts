/**
 * HTML built from text that may be hostile: reject payloads and error messages are source data, and a
 * `<script>` in them must show as text. Every value interpolated into {@link html} is escaped unless it is
 * itself markup made by {@link html} (or {@link trustedHtml}), so escaping is the default, not a duty.
 */

/** Markup that is already safe to insert. */
export class SafeHtml {
  constructor(readonly text: string) {}

  toString(): string {
    return this.text;
  }
}

/** A value {@link html} accepts: text and numbers are escaped, markup is inserted, arrays are joined, null and false vanish. */
export type HtmlValue = SafeHtml | string | number | null | undefined | false | readonly HtmlValue[];

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** `text` escaped for an HTML text node or a quoted attribute value. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ESCAPES[c]!);
}

/**
 * Markup with every interpolated value escaped.
 *
 * @example
 * html`<td title="${error}">${count}</td>`.text // error's quotes and brackets come out as entities
 */
export function html(strings: TemplateStringsArray, ...values: HtmlValue[]): SafeHtml {
  let out = strings[0]!;
  for (let i = 0; i < values.length; i++) out += render(values[i]) + strings[i + 1]!;
  return new SafeHtml(out);
}

/** Markup written by this program itself (constant CSS and script): inserted as it is. */
export function trustedHtml(text: string): SafeHtml {
  return new SafeHtml(text);
}

/**
 * `value` as JSON that can sit inside a `<script type="application/json">` element: `<`, `>` and `&` are
 * written as Unicode escapes, so no text in it can close the element or open a comment.
 */
export function jsonInScript(value: unknown): SafeHtml {
  return new SafeHtml(
    JSON.stringify(value)
      .replace(/</g, '\\u003c')
      .replace(/>/g, '\\u003e')
      .replace(/&/g, '\\u0026')
      .replace(/\u2028/g, '\\u2028')
      .replace(/\u2029/g, '\\u2029'),
  );
}

function render(value: HtmlValue): string {
  if (value === null || value === undefined || value === false) return '';
  if (value instanceof SafeHtml) return value.text;
  if (Array.isArray(value)) return value.map(render).join('');
  return escapeHtml(String(value));
}
