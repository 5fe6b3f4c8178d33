// The device tree scanner (symbols/dts-definitions.ts): a table of device tree shapes with
// the definitions each must give, and the same table against ctags itself wherever the two
// are meant to agree (every case but those marked with why they differ); malformed input
// read as far as it goes, random input that always ends.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { dtsDefinitions, isDtsPath } from '../../daemon/symbols/dts-definitions.ts';
import { ctagsAvailable, sortSymbolDefs, type SymbolDef } from '../../daemon/symbols/ctags.ts';
import { checkAgainstCtags, inScannerOrder, randomInputs, showDef, type ScannerCase } from '../helpers/symbols.ts';
import { extractSymbols, scannedSymbols } from '../../daemon/symbols/extract.ts';
import { nameStarts } from '../../daemon/symbols/name-range.ts';

const bytes = (s: string): Buffer => Buffer.from(s, 'utf8');

/** A definition as the table writes it: "kind name line[-end] [parentKind:parent]". */
const show = (d: SymbolDef): string => showDef(d);
const scan = (src: string): string[] => sortSymbolDefs(dtsDefinitions(bytes(src))).map(show);

const CASES: ScannerCase[] = [
  {
    name: 'labelled nodes, nested, with the innermost labelled node as parent',
    src: '/dts-v1/;\n/ {\n\tsoc: soc@0 {\n\t\tuart0: serial@1000 {\n\t\t\tcompatible = "ns16550a";\n\t\t\tdma: dma@1 {\n\t\t\t};\n\t\t};\n\t};\n};\n',
    want: ['label soc 3-9', 'label uart0 4-8 label:soc', 'label dma 6-7 label:soc.uart0'],
  },
  {
    name: 'a labelled node goes on past an unlabelled child',
    src: '/ {\n\tsoc: soc@0 {\n\t\tbus@2000 {\n\t\t\ti2c1: i2c@0 {\n\t\t\t};\n\t\t};\n\t\tspi: spi@0 { };\n\t};\n};\n',
    want: ['label soc 2-8', 'label i2c1 4-5 label:soc', 'label spi 7 label:soc'],
    differs: 'ctags ends a labelled node at the closing brace of its first unlabelled child',
  },
  {
    name: 'macros, one line and continued; #if 0 is read, as the build preprocesses it',
    src: '#define A 1\n#define B(x) \\\n\t((x) + 1)\n#if 0\n/ {\n\thidden: node { };\n};\n#endif\n',
    want: ['macro A 1', 'macro B 2-3', 'label hidden 6'],
  },
  {
    name: 'properties at the start of a line (#address-cells) are not directives that define anything',
    src: '/ {\n\tn: node@0 {\n\t\t#address-cells = <1>;\n\t\t#size-cells = <0>;\n\t\tc: child@0 { };\n\t};\n};\n',
    want: ['label n 2-6', 'label c 5 label:n'],
  },
  {
    name: 'references define nothing; their labelled children have no labelled parent in the file',
    src: '&uart0 {\n\tstatus = "okay";\n\tbt: bluetooth {\n\t};\n};\n',
    want: ['label bt 3-4'],
  },
  {
    name: 'comments and strings hide what looks like labels and braces',
    src: '/ {\n\t/* gone: node { */\n\tn: node {\n\t\ts = "x: y {";\n\t\t// z: w {\n\t};\n};\n',
    want: ['label n 3-6'],
  },
  {
    name: 'a statement after /include/ "file" (which takes no semicolon) may be labelled',
    src: '/ {\n\tsoc {\n/include/ "pq3-duart-0.dtsi"\n\tserial0: serial@4500 {\n\t\tinterrupts = <18 2 0 0>;\n\t};\n\t};\n};\n',
    want: ['label serial0 4-6'],
  },
  {
    name: 'every label of a node, not only the first',
    src: '/ {\n\tvcc_host: vcc_otg: regulator {\n\t\tx = <1>;\n\t};\n};\n',
    want: ['label vcc_host 2-4', 'label vcc_otg 2-4'],
    differs: 'ctags tags only the first label of a node',
  },
  {
    name: "a node opened on the line of its parent's brace",
    src: '/ {\n\tp: port@0 { ep: endpoint { remote = <&x>; }; };\n};\n',
    want: ['label p 2', 'label ep 2 label:p'],
    differs: 'ctags misses a labelled node opened on the same line as its parent',
  },
  {
    name: 'a labelled property ends at its semicolon, and the node goes on',
    src: '/ {\n\tn: node {\n\t\tlp: prop = <2>;\n\t\tk: kid {\n\t\t};\n\t};\n\tm: next { };\n};\n',
    want: ['label n 2-6', 'label lp 3 label:n', 'label k 4-5 label:n', 'label m 7'],
    differs: "ctags takes a property's label for a node that goes on to the next closing brace",
  },
  {
    name: 'a labelled node after /omit-if-no-ref/',
    src: '/ {\n\t/omit-if-no-ref/ pins: pins-grp {\n\t\tk: kid { };\n\t};\n};\n',
    want: ['label pins 2-4', 'label k 3 label:pins'],
    differs: 'ctags tags no label after /omit-if-no-ref/',
  },
  {
    name: 'labels inside a value are not read (as ctags does not); CRLF line ends; a byte order mark',
    src: '\ufeff/ {\r\n\tn: node {\r\n\t\treg = <l: 0x1 &n>;\r\n\t};\r\n};\r\n',
    want: ['label n 2-4'],
  },
];

for (const c of CASES) {
  test(`DTS scanner: ${c.name}`, () => {
    assert.deepEqual(scan(c.src), inScannerOrder(c.want, show));
  });
}

test('DTS scanner: ctags gives the same definitions wherever the table says it does, and others where it says why', {
  skip: !ctagsAvailable() && 'universal-ctags is not installed',
}, () => {
  checkAgainstCtags(
    CASES,
    (_, i) => `t${i}.dts`,
    (c) => scan(c.src),
    show,
  );
});

test('DTS scanner: which paths it reads, through the one extraction rule', () => {
  assert.equal(isDtsPath('arch/arm/boot/dts/a.dts'), true);
  assert.equal(isDtsPath('arch/arm/boot/dts/a.dtsi'), true);
  assert.equal(isDtsPath('a.dtb'), false);
  assert.equal(isDtsPath('a.dts.txt'), false);
  const src = bytes('/ {\n\tn: node { };\n};\n');
  assert.deepEqual(scannedSymbols('x.dtsi', src)?.map(show), ['label n 2']);
  assert.equal(scannedSymbols('x.txt', src), undefined);
  assert.equal(scannedSymbols('x.dts', new Uint8Array(0)), undefined, 'empty: nothing, as ctags');
  assert.deepEqual(extractSymbols([{ path: 'b.dts', content: src }]).symbols[0]!.map(show), ['label n 2']);
});

test('DTS scanner: each definition says where its name is, and the name ranges are those of the line rule', () => {
  const src = bytes('#define M 1\n/ {\n\tfirst: second: node {\n\t\tp: prop = <1>;\n\t};\n};\n');
  const defs = sortSymbolDefs(dtsDefinitions(src));
  for (const d of defs) assert.equal(src.toString('latin1', d.at!, d.at! + d.name.length), d.name);
  const lines = defs.map((d) => d.line);
  const names = defs.map((d) => d.name);
  assert.deepEqual(
    nameStarts(
      src,
      lines,
      names,
      defs.map((d) => d.at),
    ),
    nameStarts(src, lines, names),
  );
});

test('DTS scanner: malformed input is read as far as it goes', () => {
  assert.deepEqual(scan('/ {\n\tn: node {\n\t\tk: kid {\n'), ['label n 2-4', 'label k 3-4 label:n'], 'cut short: what is open ends at the last line');
  assert.deepEqual(scan('};\n}\nn: node { };\n'), ['label n 3'], 'closing braces with nothing open');
  assert.deepEqual(scan('/ {\n\tn: node {\n\t\tp = <1>\n\t};\n};\n'), ['label n 2-4'], 'a value without its semicolon ends at the brace');
  assert.deepEqual(scan('/ {\n\ts = "unterminated\n;\n\tn: node { };\n};\n'), ['label n 4'], 'a string ends at its line');
  assert.deepEqual(scan('/* never closed\nn: node { };\n'), []);
  assert.deepEqual(scan('#define\n#define 1X\n#define OK \\\n'), ['macro OK 3-4'], 'no name, a number, a continuation at the end');
  const deep = `/ {\n${'a: n {\n'.repeat(100_000)}${'};\n'.repeat(100_000)}};\n`;
  assert.equal(dtsDefinitions(bytes(deep)).length, 100_000, 'nested 100,000 deep: no recursion');
});

test('DTS scanner: random bytes and random device-tree token soup end, and every definition is well formed', () => {
  const pieces = [
    '/ {',
    '};',
    '{',
    '}',
    ';',
    'a:',
    'b: ',
    'node@1',
    ' = <1 &a>',
    '"s{"',
    "'c'",
    '/* x */',
    '// y\n',
    '\n',
    '#define Q 1\n',
    '#if 0\n',
    '/include/ "f"',
    '/omit-if-no-ref/ ',
    '\\\n',
    '\r\n',
    '=',
    '<',
    '>',
    '&',
    '/',
  ];
  let round = 0;
  for (const src of randomInputs(17, pieces, 400, 3000, 400)) {
    const lines = src.toString('latin1').split('\n').length;
    for (const d of dtsDefinitions(src)) {
      assert.ok(d.name.length > 0 && d.line >= 1 && d.endLine >= d.line && d.endLine <= lines, `round ${round}: ${show(d)}`);
      assert.equal(src.toString('latin1', d.at!, d.at! + d.name.length), d.name);
    }
    round++;
  }
});
