// The public API written down: one API Extractor report per entry of package.json's `exports`
// (api/<entry>.api.md), made from the built declarations in dist/. Run after the build:
//   node scripts/api-report.mjs            check: fails when an entry's API differs from its report
//   node scripts/api-report.mjs --update   write the reports after a deliberate change
// `npm test` runs the check, so a change to the API is a diff of api/ in review. The reports
// list types and values; test/package/exports.test.ts counts the runtime names of each entry.
import { Extractor, ExtractorConfig } from '@microsoft/api-extractor';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const update = process.argv.includes('--update');
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
const temp = mkdtempSync(join(tmpdir(), 'svc-api-'));
mkdirSync(join(root, 'api'), { recursive: true });

/** Each entry as [specifier, declaration file, report name]: '.' is dist/index.d.ts, './x' is dist/x/index.d.ts. */
const entries = Object.keys(pkg.exports)
  .filter((key) => key !== './package.json')
  .map((key) => {
    const spec = key === '.' ? pkg.name : `${pkg.name}/${key.slice(2)}`;
    return [spec, pkg.exports[key].types, spec.replace('/', '-')];
  });

let failed = 0;
try {
  for (const [spec, types, name] of entries) {
    const config = ExtractorConfig.prepare({
      configObject: {
        projectFolder: root,
        mainEntryPointFilePath: join(root, types),
        compiler: { tsconfigFilePath: join(root, 'tsconfig.build.json') },
        apiReport: { enabled: true, reportFolder: join(root, 'api'), reportTempFolder: temp, reportFileName: name },
        docModel: { enabled: false },
        dtsRollup: { enabled: false },
        tsdocMetadata: { enabled: false },
        messages: {
          // TypeDoc (`npm run docs`) checks the documentation and its links across entries;
          // a type another entry exports shows in the report as an ae-forgotten-export note.
          extractorMessageReporting: {
            default: { logLevel: 'warning' },
            'ae-missing-release-tag': { logLevel: 'none' },
            'ae-undocumented': { logLevel: 'none' },
            'ae-unresolved-link': { logLevel: 'none' },
            'ae-forgotten-export': { logLevel: 'none', addToApiReportFile: true },
          },
          tsdocMessageReporting: { default: { logLevel: 'none' } },
        },
      },
      configObjectFullPath: join(root, 'api-extractor.json'),
      packageJsonFullPath: join(root, 'package.json'),
    });
    const result = Extractor.invoke(config, {
      localBuild: update,
      messageCallback: (message) => {
        // The preamble names the TypeScript version it bundles; the outcome is said below.
        if (message.messageId.startsWith('console-') && message.logLevel !== 'error') message.handled = true;
      },
    });
    if (result.apiReportChanged && !update) {
      failed++;
      console.error(`${spec}: the API differs from api/${name}.api.md (the new report: ${join(temp, `${name}.api.md`)}).`);
    } else if (!result.succeeded) {
      failed++;
      console.error(`${spec}: API Extractor failed (${result.errorCount} errors).`);
    } else {
      console.log(`${spec}: ${result.apiReportChanged ? 'api report updated' : 'api report unchanged'}`);
    }
  }
} finally {
  if (failed === 0) rmSync(temp, { recursive: true, force: true });
}
if (failed > 0) {
  console.error('After a deliberate change: npm run build && node scripts/api-report.mjs --update, and review the diff of api/.');
  process.exit(1);
}
