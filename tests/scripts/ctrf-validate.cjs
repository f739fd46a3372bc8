// Validate CTRF reports with the official package (npm `ctrf`: its
// ctrf-schema-0.0.json through its own `validate`), as a consumer would.
// Usage: node ctrf-validate.cjs FILE...; prints each invalid file's errors
// and exits 1 when any is invalid. hack/install-test-tools.sh installs the
// package globally; NODE_PATH or `npm root -g` finds it.
'use strict';
const fs = require('fs');
const path = require('path');
const { execSync } = require('child_process');

function load() {
  try {
    return require('ctrf');
  } catch (e) {
    const root = execSync('npm root -g').toString().trim();
    return require(path.join(root, 'ctrf'));
  }
}

const ctrf = load();
let invalid = 0;
for (const file of process.argv.slice(2)) {
  const report = JSON.parse(fs.readFileSync(file, 'utf8'));
  const result = ctrf.validate(report);
  if (!result.valid) {
    invalid += 1;
    console.log(`${file}: ${JSON.stringify(result.errors)}`);
  }
}
process.exit(invalid ? 1 : 0);
