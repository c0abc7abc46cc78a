import { createHash } from 'node:crypto';
import { CLIENT_SCRIPT } from './clientScript';
import { PAGE_STYLE } from './pageStyle';

// Every string from a history file is untrusted: it reaches the page only through `esc` (as
// text or a quoted attribute value) or through `scriptJson` (as data the script reads with
// JSON.parse and writes with textContent). The Content-Security-Policy is the second wall:
// only the page's own script and style, by hash, run; nothing may be fetched or framed.

const ENTITIES: Readonly<Record<string, string>> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

/** Text made safe for HTML content and for double- or single-quoted attribute values. */
export function esc(value: unknown): string {
  return String(value).replace(/[&<>"']/g, (c) => ENTITIES[c]!);
}

/**
 * JSON for a `<script type="application/json">` block: `<`, `>`, `&` and the two line
 * separators JavaScript once treated as line ends are written as `\u` escapes, so no string
 * in it can close the block (`</script>`) or open a comment (`<!--`); JSON.parse reads it back unchanged.
 */
export function scriptJson(value: unknown): string {
  return JSON.stringify(value).replace(
    /[<>&\u2028\u2029]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}

function sha256(text: string): string {
  return `'sha256-${createHash('sha256').update(text, 'utf8').digest('base64')}'`;
}

const SCRIPT_HASH = sha256(CLIENT_SCRIPT);
const STYLE_HASH = sha256(PAGE_STYLE);

/** The policy the page carries: its own inline script and style (by hash), data: images, nothing else. */
export const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  `script-src ${SCRIPT_HASH}`,
  `style-src ${STYLE_HASH}`,
  'img-src data:',
  "base-uri 'none'",
  "form-action 'none'",
].join('; ');

/** A whole page: policy, style, the body (already escaped HTML), the data block and the script. */
export function page(title: string, body: string, data: unknown): string {
  return [
    '<!DOCTYPE html>',
    '<html lang="en">',
    '<head>',
    '<meta charset="utf-8">',
    `<meta http-equiv="Content-Security-Policy" content="${esc(CONTENT_SECURITY_POLICY)}">`,
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    '<meta name="referrer" content="no-referrer">',
    // An empty icon, so the browser does not ask the server (or the disk) for /favicon.ico.
    '<link rel="icon" href="data:,">',
    `<title>${esc(title)}</title>`,
    `<style>${PAGE_STYLE}</style>`,
    '</head>',
    '<body>',
    body,
    `<script type="application/json" id="report-data">${scriptJson(data)}</script>`,
    `<script>${CLIENT_SCRIPT}</script>`,
    '</body>',
    '</html>',
    '',
  ].join('\n');
}

/**
 * A whole page without a script (the diff page: all of it is in the markup): the report's
 * style and `extraStyle`, each allowed by its hash; the body already escaped HTML.
 */
export function staticPage(title: string, body: string, extraStyle = ''): string {
  const policy = [
    "default-src 'none'",
    "script-src 'none'",
    `style-src ${STYLE_HASH} ${sha256(extraStyle)}`,
    'img-src data:',
    "base-uri 'none'",
    "form-action 'none'",
  ].join('; ');
  return [
    '<!DOCTYPE html>',
    '<html lang="en">',
    '<head>',
    '<meta charset="utf-8">',
    `<meta http-equiv="Content-Security-Policy" content="${esc(policy)}">`,
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    '<meta name="referrer" content="no-referrer">',
    '<link rel="icon" href="data:,">',
    `<title>${esc(title)}</title>`,
    `<style>${PAGE_STYLE}</style>`,
    `<style>${extraStyle}</style>`,
    '</head>',
    '<body>',
    body,
    '</body>',
    '</html>',
    '',
  ].join('\n');
}
