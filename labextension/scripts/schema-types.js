/**
 * The TypeScript types of porter's report JSON, generated from the schema porter
 * validates its reports with (porter_ext/report/schema/report-1.schema.json), so that
 * the extension reads the fields the Python side writes and nothing else: a field
 * renamed or added there changes these types at the next build. Written to
 * src/schema.generated.ts (not tracked; every build and `jlpm test` writes it).
 */
const fs = require('fs');
const path = require('path');
const { compile } = require('json-schema-to-typescript');

const SCHEMA = path.join(
  __dirname,
  '..',
  '..',
  'porter_ext',
  'report',
  'schema',
  'report-1.schema.json'
);
const OUT = path.join(__dirname, '..', 'src', 'schema.generated.ts');

async function main() {
  const schema = JSON.parse(fs.readFileSync(SCHEMA, 'utf8'));
  const ts = await compile(schema, 'PorterReport', {
    bannerComment:
      '/* Generated from porter_ext/report/schema/report-1.schema.json by\n' +
      ' * labextension/scripts/schema-types.js: do not edit. */',
    additionalProperties: false,
    strictIndexSignatures: true,
    style: { singleQuote: true, trailingComma: 'none' }
  });
  if (!fs.existsSync(OUT) || fs.readFileSync(OUT, 'utf8') !== ts) {
    fs.writeFileSync(OUT, ts);
  }
}

main().catch(error => {
  console.error(error);
  process.exit(1);
});
