#!/usr/bin/env bash
# The consumer check (`pnpm consumer-check`, run by .ci/run): our packages as a new user gets them. Builds, packs every
# package, checks what the tarballs hold, installs them into a fresh npm app outside the workspace with exactly the
# Effect versions README.md's "Install" section names, compiles README.md's "Use" example there with the app's own
# tsconfig (strict, NodeNext) with every other example of README.md and docs/*.md, every package README's examples and
# the examples of examples/ (those of the edition: a block belongs to the Effect 4 edition iff it mentions
# `@erp-client/effect4-`), runs the example of
# @erp-client/testing's README (a test file) and the examples' tests with vitest, runs the Use example with plain node against a sandbox started by the installed `erp`
# bin, checks that the app has one copy of each Effect package, and that an app on an older Effect 3 minor is refused
# at install.
#
# `consumer-check.sh effect4` does the same for the Effect 4 edition (Node >= 22.19): the kernel, the fake ERP, the
# effect4-* packages and the command, in an app with README.md's Effect 4 install line (effect 4,
# @effect/platform-node 4, @effect/vitest 4, vitest 5), its Effect 4 Use example, the effect4 packages' README examples
# and examples/*-effect4.
# Everything it makes is removed at the end; every step is bounded in time. The last line says passed or FAILED.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
EDITION=${1:-effect3}
case "$EDITION" in
  effect3 | effect4) ;;
  *) echo "usage: consumer-check.sh [effect3|effect4]"; exit 2 ;;
esac
export EDITION
# The packages of an edition (directories of packages/): the kernel, the fake ERP (which the sandbox and both test
# kits serve) and the command belong to both.
edition_packages() {
  for dir in packages/*/; do
    name=$(basename "$dir")
    case "$name" in
      kernel | fake-erp | cli) echo "$name" ;;
      effect4-*) [ "$EDITION" = effect4 ] && echo "$name" ;;
      *) [ "$EDITION" = effect3 ] && echo "$name" ;;
    esac
  done
  return 0
}
PACKAGES=$(edition_packages | tr '\n' ' ')
export PACKAGES

WORK=$(mktemp -d "${TMPDIR:-/tmp}/erp-consumer-check.XXXXXX")
SANDBOX_PID=""
STEP="start"
# Waits (30 s at most) until a server started in the background writes PATTERN to FILE; its stderr is shown, and the
# check fails, if it ends first.
wait_for_line() { # PID PATTERN FILE STDERR
  for _ in $(seq 1 150); do
    grep -q "$2" "$3" 2>/dev/null && return 0
    kill -0 "$1" 2>/dev/null || { cat "$4"; return 1; }
    sleep 0.2
  done
}

cleanup() {
  local code=$?
  if [ -n "$SANDBOX_PID" ]; then kill -INT -- "-$SANDBOX_PID" 2>/dev/null || true; fi
  rm -rf "$WORK"
  if [ "$code" -eq 0 ]; then echo "consumer check ($EDITION): passed"; else echo "consumer check ($EDITION): FAILED at: $STEP"; fi
  exit "$code"
}
trap cleanup EXIT
step() {
  STEP=$1
  echo "--- consumer check: $1"
}
# npm without audit and funding messages; its warnings about this machine's user config are left out.
quiet() { grep -v 'Unknown user config' || true; }

step "build"
timeout 300 pnpm --silent build
# The API reference each package of the edition ships and its README links (docs/reference, from `pnpm run docs`;
# .ci/run builds it fresh before this check; a local run without it builds it here, and otherwise packs it as last
# built). Packages whose README links none (the Effect 4 edition's, for now) need none.
missing_reference() {
  for name in $PACKAGES; do
    if grep -q '](docs/reference/README.md)' "packages/$name/README.md" &&
      [ ! -f "packages/$name/docs/reference/README.md" ]; then return 0; fi
  done
  return 1
}
if missing_reference; then
  timeout 600 pnpm --silent run docs >/dev/null
fi

step "pack every package of the edition: $PACKAGES"
mkdir -p "$WORK/tarballs"
for name in $PACKAGES; do
  (cd "packages/$name" && timeout 60 pnpm pack --pack-destination "$WORK/tarballs" >/dev/null)
done

step "what the tarballs hold"
node - "$WORK/tarballs" <<'EOF'
const { execFileSync } = require("node:child_process")
const fs = require("node:fs")
const path = require("node:path")
const dir = process.argv[2]
let failed = false
for (const file of fs.readdirSync(dir).sort()) {
  const entries = execFileSync("tar", ["tzf", path.join(dir, file)], { encoding: "utf8" }).trim().split("\n")
  const pkg = JSON.parse(execFileSync("tar", ["xzf", path.join(dir, file), "-O", "package/package.json"], { encoding: "utf8" }))
  const problems = []
  const forbidden = entries.filter((e) => /^package\/(src|test|build)\/|tsconfig|\.tsbuildinfo$|\.map$/.test(e))
  if (forbidden.length > 0) problems.push(`ships ${forbidden.slice(0, 3).join(", ")}`)
  for (const needed of ["package/README.md", "package/LICENSE", "package/package.json"]) {
    if (!entries.includes(needed)) problems.push(`no ${needed.slice(8)}`)
  }
  if (!pkg.repository?.url || !pkg.repository?.directory) problems.push("no repository with directory")
  if (pkg.exports?.["./package.json"] !== "./package.json") problems.push("./package.json not exported")
  if (JSON.stringify(pkg).includes("workspace:")) problems.push("a workspace: range left in package.json")
  if (pkg.bin) {
    for (const bin of Object.values(pkg.bin)) if (!entries.includes(`package/${bin.replace(/^\.\//, "")}`)) problems.push(`no ${bin}`)
  } else {
    if (pkg.exports?.["./internal/*"] !== null) problems.push("internal modules exported")
    if (!entries.includes("package/dist/index.js") || !entries.includes("package/dist/index.d.ts")) problems.push("no dist/index")
  }
  // A library's API reference, which its README links: an index and a page per module (the command exports no module).
  const pages = entries.filter((e) => /^package\/docs\/reference\/[A-Za-z]+\.md$/.test(e))
  if (!pkg.bin && (!entries.includes("package/docs/reference/README.md") || pages.length < 2)) problems.push("no API reference in docs/reference")
  const peers = Object.entries(pkg.peerDependencies ?? {}).map(([n, r]) => `${n}@${r}`).join(" ")
  console.log(`${pkg.name}: ${entries.length} files; peers: ${peers || "none"}; dependencies: ${Object.keys(pkg.dependencies ?? {}).join(" ") || "none"}${problems.length ? "; PROBLEMS: " + problems.join("; ") : ""}`)
  failed ||= problems.length > 0
}
process.exit(failed ? 1 : 0)
EOF

step "the Effect versions README.md names"
# The first `npm install` line of the first ```sh block under "## Install": its name@range arguments that are not ours.
README_VERSIONS=$(node - "$ROOT" <<'EOF'
const fs = require("node:fs")
const path = require("node:path")
const root = process.argv[2]
const readme = fs.readFileSync(path.join(root, "README.md"), "utf8")
const section = readme.split(/^## /m).find((s) => s.startsWith("Install\n"))
if (!section) throw new Error('README.md has no "## Install" section')
// The first `npm install` line of the section's sh blocks that installs this edition's packages.
const effect4 = process.env.EDITION === "effect4"
const lines = [...section.matchAll(/```sh\n([\s\S]*?)```/g)].flatMap((m) => m[1].split("\n"))
const line = lines.find((l) => /^\s*npm install /.test(l) && l.includes("@erp-client/effect4-") === effect4)
if (!line) throw new Error(`README.md: no "npm install" line of the ${process.env.EDITION} edition under "## Install"`)
const specs = line.trim().split(/\s+/).slice(2).filter((a) => !a.startsWith("-") && !a.startsWith("@erp-client/"))
if (!specs.some((s) => /^effect@/.test(s))) throw new Error("README.md's install line names no effect version")
// The ranges must be the ones our packages declare as peers: one source of truth, checked.
const at = (spec) => { const i = spec.lastIndexOf("@"); return [spec.slice(0, i), spec.slice(i + 1)] }
for (const dir of process.env.PACKAGES.trim().split(" ")) {
  const pkg = JSON.parse(fs.readFileSync(path.join(root, "packages", dir, "package.json"), "utf8"))
  for (const [name, range] of specs.map(at)) {
    const peer = pkg.peerDependencies?.[name]
    if (peer !== undefined && peer !== range) throw new Error(`README.md installs ${name}@${range}, ${pkg.name} declares the peer ${name}@${peer}`)
  }
}
console.log(specs.join(" "))
EOF
)
echo "README.md: npm install … $README_VERSIONS"

step "a fresh npm app with the tarballs and those versions"
APP="$WORK/app"
mkdir -p "$APP/src"
cd "$APP"
cat > package.json <<'EOF'
{ "name": "erp-consumer", "version": "1.0.0", "private": true, "type": "module" }
EOF
# shellcheck disable=SC2086
timeout 300 npm install --no-audit --no-fund --loglevel=warn "$WORK"/tarballs/*.tgz $README_VERSIONS 2>&1 | quiet
# @effect/vitest and vitest: the README of the edition's testing package is a test file, compiled and run below.
if [ "$EDITION" = effect4 ]; then
  timeout 300 npm install --no-audit --no-fund --loglevel=warn --save-dev typescript@~5.9.3 @types/node@^22.19.0 \
    @effect/vitest@^4.0.5 vitest@^5.1.1 2>&1 | quiet
else
  timeout 300 npm install --no-audit --no-fund --loglevel=warn --save-dev typescript@~5.9.3 @types/node@^20.19.0 \
    @effect/vitest@^0.30.0 vitest@^3.2.4 2>&1 | quiet
  # Sync's optional peer, as README.md's Install lists it for an application that keeps a list in a database.
  timeout 300 npm install --no-audit --no-fund --loglevel=warn @effect/sql@^0.52.1 2>&1 | quiet
fi
# tsx: README.md's Install runs an application's .ts file with it (checked below).
timeout 300 npm install --no-audit --no-fund --loglevel=warn --save-dev tsx@^4.20.6 2>&1 | quiet

step "one copy of each Effect package"
{ npm ls effect 2>&1 || true; } | quiet
if [ "$EDITION" = effect4 ]; then EFFECT_PACKAGES="effect @effect/platform-node"; else
  EFFECT_PACKAGES="effect @effect/platform @effect/experimental @effect/platform-node"; fi
for name in $EFFECT_PACKAGES; do
  copies=$(find . -path "*/node_modules/$name/package.json" | wc -l)
  echo "$name: $copies copy"
  [ "$copies" -eq 1 ]
done
npm ls effect >/dev/null 2>&1 || { echo "npm ls effect reports a problem"; false; }

step "README.md's and docs/*.md's examples, the packages' README examples and examples/ compile (strict, NodeNext)"
# src/main.ts: the first ```ts block under "## Use" in README.md (run below); src/readme/: every other ```ts block of
# README.md and docs/*.md, and every ```ts block of the packages' READMEs (compiled only). Only the edition's: a block
# belongs to the Effect 4 edition iff it mentions `@erp-client/effect4-`.
node - "$ROOT" <<'EOF'
const fs = require("node:fs")
const path = require("node:path")
const root = process.argv[2]
const readme = fs.readFileSync(path.join(root, "README.md"), "utf8")
const section = readme.split(/^## /m).find((s) => s.startsWith("Use\n"))
// The edition's Use example: the first ```ts block under "## Use" that imports (or not) the effect4 packages.
const effect4 = process.env.EDITION === "effect4"
const example = [...(section ?? "").matchAll(/```ts\n([\s\S]*?)```/g)].map((m) => m[1])
  .find((block) => block.includes("@erp-client/effect4-") === effect4)
if (!example) throw new Error(`README.md: no ts block of the ${process.env.EDITION} edition under "## Use"`)
fs.writeFileSync("src/main.ts", example)
fs.mkdirSync("src/readme")
const blocksOf = (text) => [...text.matchAll(/```ts\n([\s\S]*?)```/g)].map((m) => m[1])
// docs/ARCHITECTURE.md is the repository's guide, not an application's: its snippets (a resource added to the
// repository's packages, @erp-client/cli's in-process runner) compile only there, and its tests hold them
// (packages/cli/test/newEndpoint.test.ts).
const guides = [
  "README.md",
  ...fs.readdirSync(path.join(root, "docs")).filter((file) => file.endsWith(".md") && file !== "ARCHITECTURE.md")
    .sort().map((file) => `docs/${file}`)
]
for (const file of guides) {
  const blocks = blocksOf(fs.readFileSync(path.join(root, file), "utf8"))
    .filter((block) => block.includes("@erp-client/effect4-") === effect4 && block !== example)
  const name = file.replace(/\.md$/, "").replace(/\//g, "-")
  // A block whose first line names its file (`// Invoice.ts`) is written under that name, for a later block of the
  // page to import it (`./Invoice.js`) as the reader's project would.
  blocks.forEach((block, i) => {
    const named = /^\/\/ ([A-Za-z][A-Za-z0-9_-]*\.ts)\n/.exec(block)
    fs.writeFileSync(`src/readme/${named === null ? `${name}-${i + 1}.ts` : named[1]}`, block + "\nexport {}\n")
  })
  if (blocks.length > 0) console.log(`${file}: ${blocks.length} example(s) besides the Use example`)
}
for (const dir of process.env.PACKAGES.trim().split(" ")) {
  const text = fs.readFileSync(path.join(root, "packages", dir, "README.md"), "utf8")
  const blocks = [...text.matchAll(/```ts\n([\s\S]*?)```/g)].map((m) => m[1])
  blocks.forEach((block, i) => fs.writeFileSync(`src/readme/${dir}-${i + 1}.ts`, block + "\nexport {}\n"))
  if (blocks.length > 0) console.log(`packages/${dir}/README.md: ${blocks.length} example(s)`)
}
EOF
# src/examples/NAME/: each example of examples/ (a service and its tests), as an application holds it.
for example in "$ROOT"/examples/*/; do
  case "$(basename "$example")" in
    *-effect4) [ "$EDITION" = effect4 ] || continue ;;
    *) [ "$EDITION" = effect3 ] || continue ;;
  esac
  mkdir -p "src/examples/$(basename "$example")"
  cp "$example"src/*.ts "src/examples/$(basename "$example")/"
  echo "examples/$(basename "$example"): $(ls "$example"src | tr '\n' ' ')"
done
cat > tsconfig.json <<'EOF'
{
  "compilerOptions": {
    "strict": true,
    "exactOptionalPropertyTypes": true,
    "module": "NodeNext",
    "moduleResolution": "NodeNext",
    "target": "ES2022",
    "lib": ["ES2022"],
    "types": ["node"],
    "outDir": "dist",
    "rootDir": "src",
    "skipLibCheck": true
  },
  "include": ["src"]
}
EOF
timeout 120 ./node_modules/.bin/tsc -p tsconfig.json

step "the README example of the edition's testing package runs as a test (vitest, in memory: no port)"
mkdir -p test
if [ "$EDITION" = effect4 ]; then cp src/readme/effect4-testing-1.ts test/testing-readme.test.ts; else
  cp src/readme/testing-1.ts test/testing-readme.test.ts; fi
timeout 120 npx --no vitest run --reporter=dot test/testing-readme.test.ts 2>&1 | tail -5

step "the tests of examples/ run (vitest, in memory: no port)"
timeout 120 npx --no vitest run --reporter=dot src/examples 2>&1 | tail -5

step "the installed erp bin starts a sandbox"
setsid npx --no erp sandbox --port 0 --partners 500 > "$WORK/sandbox.out" 2> "$WORK/sandbox.err" &
SANDBOX_PID=$!
wait_for_line "$SANDBOX_PID" '^export ERP_API_KEY=' "$WORK/sandbox.out" "$WORK/sandbox.err"
BASE_URL=$(sed -n 's/^export ERP_BASE_URL=//p' "$WORK/sandbox.out")
API_KEY=$(sed -n 's/^export ERP_API_KEY=//p' "$WORK/sandbox.out")
[ -n "$BASE_URL" ] && [ -n "$API_KEY" ] || { echo "the sandbox printed no base URL and key"; cat "$WORK/sandbox.out" "$WORK/sandbox.err"; false; }
echo "sandbox: $BASE_URL"

step "the Use example runs on plain node against it"
set +e
ERP_BASE_URL=$BASE_URL ERP_API_KEY=$API_KEY timeout 120 node dist/main.js > "$WORK/example.out" 2> "$WORK/example.err"
example_code=$?
set -e
# Log lines at INFO, as NodeRuntime's pretty logger ("[12:00:00.000] INFO (#9):") or logfmt ("level=INFO") writes them.
logged=$(grep -cE '^\[[0-9:.]+\] INFO |level=INFO' "$WORK/example.out" || true)
echo "exit $example_code, $logged lines logged at INFO, $(wc -c < "$WORK/example.err") bytes on stderr; first lines:"
head -3 "$WORK/example.out" | cut -c1-160
if [ "$example_code" -ne 0 ] || [ "$logged" -eq 0 ] || grep -Eq '^\[[0-9:.]+\] (ERROR|FATAL) |level=(ERROR|FATAL)' "$WORK/example.out"; then
  cat "$WORK/example.err" | head -20
  false
fi
# The same customers through the installed command: the example counted them ("N customers"), the command lists
# them; the two must agree.
counted=$(grep -oE '[0-9]+ customers' "$WORK/example.out" | head -1 | cut -d' ' -f1)
customers=$(ERP_BASE_URL=$BASE_URL ERP_API_KEY=$API_KEY timeout 60 npx --no erp partners list --customers | wc -l)
echo "the example counted ${counted:-no} customers; erp partners list --customers: $customers records"
[ "$customers" -gt 0 ] && [ "${counted:-0}" -eq "$customers" ]

step "the installed erp mcp answers an assistant over stdio, and serves HTTP on loopback"
# As a host starts it: initialize, then a count, piped; the count must be the command line's.
mcp_out=$(printf '%s\n' \
  '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"consumer-check","version":"1"}}}' \
  '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"partners_count","arguments":{"customers":true}}}' |
  ERP_BASE_URL=$BASE_URL ERP_API_KEY=$API_KEY timeout 60 npx --no erp mcp)
mcp_count=$(printf '%s\n' "$mcp_out" | grep '"id":2' | grep -oE '\\"count\\":[0-9]+' | grep -oE '[0-9]+$')
echo "erp mcp's partners_count of customers: ${mcp_count:-none}"
[ "${mcp_count:-0}" -eq "$customers" ] || { printf '%s\n' "$mcp_out" | cut -c1-300; false; }
ERP_BASE_URL=$BASE_URL ERP_API_KEY=$API_KEY setsid npx --no erp mcp --http --port 0 > /dev/null 2> "$WORK/mcp-http.err" &
MCP_PID=$!
wait_for_line "$MCP_PID" 'serving MCP at' "$WORK/mcp-http.err" "$WORK/mcp-http.err"
MCP_URL=$(grep -oE 'http://127\.0\.0\.1:[0-9]+/mcp' "$WORK/mcp-http.err" | head -1)
answer=$(curl -s -H 'content-type: application/json' -H 'accept: application/json, text/event-stream' "$MCP_URL" \
  -d '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"consumer-check","version":"1"}}}')
kill -TERM -- -"$MCP_PID" 2>/dev/null || true
echo "erp mcp --http at ${MCP_URL:-nowhere}: $(printf '%s' "$answer" | cut -c1-80)"
printf '%s' "$answer" | grep -q '"serverInfo":{"name":"erp"'

step "the installed erp partners sync keeps the customers in PostgreSQL and (Node 22.13 or later) SQLite"
# The bundled drivers as a user runs them: the table's rows must be the customers the command line lists.
SYNC_DB="erp_consumer_sync_$$"
psql -h 127.0.0.1 -U postgres -X -q -c "DROP DATABASE IF EXISTS $SYNC_DB" -c "CREATE DATABASE $SYNC_DB"
sync_code=0
ERP_BASE_URL=$BASE_URL ERP_API_KEY=$API_KEY timeout 120 npx --no erp partners sync --customers \
  --to "postgres://postgres@127.0.0.1:5432/$SYNC_DB" 2> "$WORK/sync-pg.err" || sync_code=$?
synced_pg=$(psql -h 127.0.0.1 -U postgres -d "$SYNC_DB" -X -q -tA -c "SELECT count(*) FROM partners" 2>/dev/null || echo none)
psql -h 127.0.0.1 -U postgres -X -q -c "DROP DATABASE IF EXISTS $SYNC_DB WITH (FORCE)"
echo "erp partners sync into PostgreSQL: exit $sync_code, $synced_pg rows; $(tail -1 "$WORK/sync-pg.err")"
[ "$sync_code" -eq 0 ] && [ "$synced_pg" = "$customers" ]
sync_code=0
ERP_BASE_URL=$BASE_URL ERP_API_KEY=$API_KEY timeout 120 npx --no erp partners sync --customers \
  --to "sqlite:$WORK/erp.sqlite" 2> "$WORK/sync-sqlite.err" || sync_code=$?
if node -e "process.exit(process.getBuiltinModule?.('node:sqlite') ? 0 : 1)"; then
  synced_sqlite=$(node -e "const { DatabaseSync } = require('node:sqlite'); const db = new DatabaseSync(process.argv[1]); \
console.log(db.prepare('SELECT count(*) AS n FROM partners').get().n)" "$WORK/erp.sqlite")
  echo "erp partners sync into SQLite: exit $sync_code, $synced_sqlite rows; $(tail -1 "$WORK/sync-sqlite.err")"
  [ "$sync_code" -eq 0 ] && [ "$synced_sqlite" = "$customers" ]
else
  # No node:sqlite on this Node: refused with the reason, and no file made.
  echo "erp partners sync into SQLite on $(node --version): exit $sync_code; $(tail -1 "$WORK/sync-sqlite.err")"
  [ "$sync_code" -eq 1 ] && grep -q "SQLite needs Node.js 22.13 or later" "$WORK/sync-sqlite.err" &&
    [ ! -e "$WORK/erp.sqlite" ]
fi

step "README.md's application set-up: npm init -y, type module, tsc --init, the Use example run by tsx"
# As Install says, from a fresh npm app: npm 11 writes "type": "commonjs", which Install has the reader change, and
# TypeScript's own tsconfig (tsc --init), not ours. The packages are those installed above (node_modules linked).
INIT="$WORK/init-app"
mkdir -p "$INIT/src"
cd "$INIT"
npm init -y >/dev/null && npm pkg set type=module
ln -s "$APP/node_modules" node_modules
"$APP/node_modules/.bin/tsc" --init >/dev/null
cp "$APP/src/main.ts" src/main.ts
timeout 120 "$APP/node_modules/.bin/tsc" --noEmit
ERP_BASE_URL=$BASE_URL ERP_API_KEY=$API_KEY timeout 120 npx --no tsx src/main.ts > "$WORK/init.out" 2>&1 ||
  { cat "$WORK/init.out" | head -20; false; }
grep -qE '[0-9]+ customers' "$WORK/init.out" || { echo "the example run by tsx counted no customers"; head -5 "$WORK/init.out"; false; }
echo "compiled with tsc --init's settings; tsx ran it: $(grep -oE '[0-9]+ customers' "$WORK/init.out" | head -1)"
cd "$APP"

kill -INT -- "-$SANDBOX_PID" 2>/dev/null || true
SANDBOX_PID=""

step "an app on another Effect line, or an older minor, is refused at install"
OLD="$WORK/old-app"
mkdir -p "$OLD"
cd "$OLD"
if [ "$EDITION" = effect4 ]; then
  # An Effect 3 app cannot take the Effect 4 packages.
  OLD_EFFECT="~3.22.4"
  OLD_TARBALLS=("$WORK"/tarballs/erp-client-effect4-core-*.tgz "$WORK"/tarballs/erp-client-effect4-client-*.tgz)
  PEER='peer effect@"~4'
else
  OLD_EFFECT="~3.19.0"
  OLD_TARBALLS=("$WORK"/tarballs/erp-client-core-*.tgz "$WORK"/tarballs/erp-client-client-*.tgz "$WORK"/tarballs/erp-client-streams-*.tgz)
  PEER='peer effect@"^3'
fi
cat > package.json <<EOF
{ "name": "erp-consumer-old", "version": "1.0.0", "private": true, "type": "module", "dependencies": { "effect": "$OLD_EFFECT" } }
EOF
set +e
timeout 300 npm --no-audit --no-fund install --dry-run "${OLD_TARBALLS[@]}" > "$WORK/old.out" 2>&1
old_code=$?
set -e
grep -E 'ERESOLVE unable|Found: effect@|peer effect@' "$WORK/old.out" | head -4
[ "$old_code" -ne 0 ] && grep -q 'ERESOLVE' "$WORK/old.out" && grep -q "$PEER" "$WORK/old.out"
STEP="done"
