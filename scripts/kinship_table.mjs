// The node half of scripts/kinship_table.py: reads the npm package relationship.js
// (a Chinese kinship calculator) and prints JSON on stdout. Nothing here filters or groups;
// the Python half does that.
//
//   node scripts/kinship_table.mjs dump LIB_DIR
//       the package's metadata, its licence text, its kinship table (relationship.data:
//       relation chain key -> list of terms, in the library's own order) and the two
//       spouse-prefix lists the library uses to synthesise compounds such as 夫爸爸
//   node scripts/kinship_table.mjs resolve LIB_DIR < {"names": [terms], "child": [terms]}
//       names: the library's own answer for each term (its preferred name for the relation);
//       child: what the speaker's child calls that person, for a male and a female speaker
//
// LIB_DIR is a directory holding node_modules/relationship.js (npm install relationship.js@1.2.9).

import { createRequire } from "node:module";
import { readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";

const [mode, libDir] = process.argv.slice(2);
if (!["dump", "resolve"].includes(mode) || !libDir) {
  process.stderr.write("usage: kinship_table.mjs dump|resolve LIB_DIR\n");
  process.exit(2);
}

const require = createRequire(join(resolve(libDir), "package.json"));
const relationship = require("relationship.js");
const main = require.resolve("relationship.js"); // …/relationship.js/dist/relationship.min.js
const packageDir = dirname(dirname(main));

function dump() {
  const pkg = JSON.parse(readFileSync(join(packageDir, "package.json"), "utf8"));
  const licenseText = readFileSync(join(packageDir, "LICENSE"), "utf8");
  // The spouse prefixes (src/module/map.js `mateMap` upstream) are not exported; they sit in the
  // bundle as one object literal. Read them from there rather than retyping them.
  const bundle = readFileSync(main, "utf8");
  const found = bundle.match(/\{w:(\[[^\]]*\]),h:(\[[^\]]*\])\}/);
  if (!found) throw new Error("spouse prefix lists not found in " + main);
  const table = [...relationship.data].map(([key, names]) => [key, names]);
  return {
    name: pkg.name,
    version: pkg.version,
    description: pkg.description,
    license: pkg.license,
    license_text: licenseText,
    author: pkg.author,
    homepage: pkg.homepage,
    repository: pkg.repository && pkg.repository.url,
    data_count: relationship.dataCount,
    spouse_prefixes: { w: JSON.parse(found[1]), h: JSON.parse(found[2]) },
    table,
  };
}

function resolveTerms({ names, child }) {
  const out = { names: {}, child: {} };
  for (const text of names) out.names[text] = relationship({ text });
  for (const text of child) {
    out.child[text] = {
      m: relationship({ text, target: "孩子", sex: 1 }),
      f: relationship({ text, target: "孩子", sex: 0 }),
    };
  }
  return out;
}

const result = mode === "dump" ? dump() : resolveTerms(JSON.parse(readFileSync(0, "utf8")));
process.stdout.write(JSON.stringify(result));
