// Only what differs from prettier's defaults. The rest (semicolons, trailing commas
// everywhere, `(x) =>`, two-space indent, double quotes in JSON) is what the code already
// did: measured on the tree before its reformat, `trailingComma: 'es5'` or
// `arrowParens: 'avoid'` would each have changed 150 to 500 more lines.
/** @type {import('prettier').Config} */
export default {
  printWidth: 120,
  singleQuote: true,
};
