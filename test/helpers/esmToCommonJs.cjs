// A jest transform for the ESM-only packages of the newer SDK majors (ai 7 and its @ai-sdk
// packages ship only `import`/`export`): TypeScript's own transpiler rewrites them to CommonJS,
// so jest's CommonJS module system can load them. Used by the `ai7-openai7` project of
// jest.config.js; the same packages run as real ESM in test/install.test.ts.
const ts = require('typescript');

module.exports = {
  process(source, filename) {
    const { outputText } = ts.transpileModule(source, {
      fileName: filename,
      compilerOptions: {
        module: ts.ModuleKind.CommonJS,
        target: ts.ScriptTarget.ES2022,
        allowJs: true,
        esModuleInterop: true,
      },
    });
    return { code: outputText };
  },
};
