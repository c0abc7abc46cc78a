import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { CLIENT_SCRIPT } from '../../lib/report/clientScript';
import { CONTENT_SECURITY_POLICY, esc, page, scriptJson } from '../../lib/report/html';
import { PAGE_STYLE } from '../../lib/report/pageStyle';

const hash = (text: string): string => `'sha256-${createHash('sha256').update(text).digest('base64')}'`;

describe('esc', () => {
  it('esc() leaves no character that could open a tag or close an attribute', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary' }), (s) => {
        expect(esc(s)).not.toMatch(/[<>"']/);
        expect(esc(s).replace(/&(amp|lt|gt|quot|#39);/g, '')).not.toContain('&');
      }),
    );
    expect(esc('<img src=x onerror="a()">')).toBe('&lt;img src=x onerror=&quot;a()&quot;&gt;');
  });
});

describe('scriptJson', () => {
  it('scriptJson() reads back unchanged and can neither close its script block nor open a comment', () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.string({ unit: 'binary' }), (value, s) => {
        for (const v of [value, s, { s }]) {
          const text = scriptJson(v);
          expect(text).not.toMatch(/[<>&\u2028\u2029]/);
          expect(JSON.parse(text)).toEqual(JSON.parse(JSON.stringify(v)));
        }
      }),
    );
    expect(scriptJson('</script><!--')).toBe('"\\u003c/script\\u003e\\u003c!--"');
  });
});

describe('page', () => {
  it('page() carries a policy that allows its own script and style by hash, and nothing else', () => {
    const html = page('t <b>', '<p>body</p>', { a: '</script>' });
    expect(CONTENT_SECURITY_POLICY).toBe(
      `default-src 'none'; script-src ${hash(CLIENT_SCRIPT)}; style-src ${hash(PAGE_STYLE)}; img-src data:; base-uri 'none'; form-action 'none'`,
    );
    expect(html).toContain(`<meta http-equiv="Content-Security-Policy" content="${esc(CONTENT_SECURITY_POLICY)}">`);
    // The policy comes before anything it governs.
    expect(html.indexOf('Content-Security-Policy')).toBeLessThan(html.indexOf('<style>'));
    expect(html).toContain(`<script>${CLIENT_SCRIPT}</script>`);
    expect(html).toContain(`<style>${PAGE_STYLE}</style>`);
    expect(html).toContain('<title>t &lt;b&gt;</title>');
    expect(html).toContain('<script type="application/json" id="report-data">{"a":"\\u003c/script\\u003e"}</script>');
    expect(html.match(/<script/g)).toHaveLength(2);
    expect(html).not.toMatch(/\b(src|href)="(?!data:)/);
  });

  it('the client script and style use no template strings, style attributes or innerHTML', () => {
    expect(CLIENT_SCRIPT).not.toMatch(
      /innerHTML|outerHTML|insertAdjacentHTML|document\.write|eval\(|new Function|setAttribute\('style'|setAttribute\('href'/,
    );
    expect(CLIENT_SCRIPT).not.toContain('</script');
    expect(PAGE_STYLE).not.toContain('</style');
    expect(PAGE_STYLE).not.toMatch(/@import|url\(/);
  });
});
