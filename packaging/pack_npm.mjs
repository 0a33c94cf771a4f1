// make dist: the npm packages as napi-rs lays them out, packed with `npm pack` into DIST:
//
//   mcplens-VERSION.tgz                the main package: napi's loader (native.js), its types, the
//                                      facade (dist/), the `mcplens` command (bin/), and an
//                                      optionalDependency on each platform package in DIST
//   mcplens-PLATFORM-VERSION.tgz       bindings-node/npm/PLATFORM: the prebuilt addon, which
//                                      `napi artifacts` copied there (packed here for each
//                                      PLATFORM named; `make dist`: the host's, linux-x64-gnu)
//
// The main package is packed from a copy of the files its `files` select (`npm pack --dry-run`),
// with `optionalDependencies` written in as `napi pre-publish` does when publishing (the
// repository's own package.json stays without them: its `npm ci` must not fetch them) and without
// the repository's scripts. It lists every platform package DIST holds (those of `make dist-all`
// too, which packs its own and then runs this with no PLATFORM to list them all).
//
//   node packaging/pack_npm.mjs VERSION DIST STAGING [PLATFORM...]
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';

const [version, distArg, stagingArg, ...pack] = process.argv.slice(2);
const [dist, staging] = [resolve(distArg), resolve(stagingArg)];
const root = resolve(import.meta.dirname, '..');
const pkgDir = join(root, 'bindings-node');
const npm = (args, cwd) => execFileSync('npm', args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
const fail = (message) => {
  console.error(`pack_npm: ${message}`);
  process.exit(1);
};

const main = JSON.parse(readFileSync(join(pkgDir, 'package.json'), 'utf8'));
if (main.version !== version) fail(`bindings-node/package.json is ${main.version}, the workspace ${version}`);
mkdirSync(dist, { recursive: true });

const manifestOf = (dir) => JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
for (const name of pack) {
  const dir = join(pkgDir, 'npm', name);
  const platform = manifestOf(dir);
  if (platform.version !== version) fail(`${platform.name} is ${platform.version}, the workspace ${version}`);
  if (!existsSync(join(dir, platform.main))) fail(`${platform.name}: ${platform.main} is missing (napi artifacts)`);
  npm(['pack', '--ignore-scripts', '--silent', '--pack-destination', dist], dir);
}
// Every platform package packed into DIST (by this run, an earlier one or `make dist-all`).
const optional = {};
for (const dir of readdirSync(join(pkgDir, 'npm')).map((d) => join(pkgDir, 'npm', d))) {
  const platform = manifestOf(dir);
  if (platform.version !== version) fail(`${platform.name} is ${platform.version}, the workspace ${version}`);
  if (existsSync(join(dist, `${platform.name}-${version}.tgz`))) optional[platform.name] = version;
}
if (Object.keys(optional).length === 0) fail(`no platform package in ${dist}`);

// What `files` selects, copied as is; then the manifest with the platform packages.
const listed = JSON.parse(npm(['pack', '--dry-run', '--json', '--ignore-scripts', '--silent'], pkgDir))[0].files;
rmSync(staging, { recursive: true, force: true });
for (const { path } of listed) {
  if (path.endsWith('.node')) fail(`the main package would carry ${path}: the addon belongs in the platform package`);
  mkdirSync(dirname(join(staging, path)), { recursive: true });
  cpSync(join(pkgDir, path), join(staging, path));
}
// The repository's scripts (build, lint, test, and `prepare`, which builds from the Rust sources)
// mean nothing in the tarball: left in, npm would flag `prepare` as an install script.
const { scripts, ...published } = main;
writeFileSync(join(staging, 'package.json'), JSON.stringify({ ...published, optionalDependencies: optional }, null, 2) + '\n');
npm(['pack', '--ignore-scripts', '--silent', '--pack-destination', dist], staging);
console.log(`pack_npm: ${main.name}-${version}.tgz and ${Object.keys(optional).map((n) => `${n}-${version}.tgz`).join(', ')}`);
