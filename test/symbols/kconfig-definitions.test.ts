// The Kconfig scanner (symbols/kconfig-definitions.ts): a table of Kconfig shapes with the
// definitions each must give, and the same table against ctags itself wherever the two are
// meant to agree (every case but those marked with why they differ); random input ends.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isKconfigPath, kconfigDefinitions } from '../../daemon/symbols/kconfig-definitions.ts';
import { ctagsAvailable, sortSymbolDefs, type SymbolDef } from '../../daemon/symbols/ctags.ts';
import { checkAgainstCtags, inScannerOrder, randomInputs, showDef, type ScannerCase } from '../helpers/symbols.ts';
import { extractSymbols, scannedSymbols } from '../../daemon/symbols/extract.ts';
import { nameStarts } from '../../daemon/symbols/name-range.ts';

const bytes = (s: string): Buffer => Buffer.from(s, 'utf8');

/** A definition as the table writes it: "kind name line[-end] [parentKind:parent]"; an anonymous choice is `choice#`. */
const show = (d: SymbolDef): string => showDef(d, /choice[0-9a-f]{12}/g, 'choice#');

const scan = (src: string): string[] => sortSymbolDefs(kconfigDefinitions('Kconfig', bytes(src))).map(show);

const CASES: ScannerCase[] = [
  {
    name: 'configs, each as NAME and CONFIG_NAME, in nested menus',
    src: 'mainmenu "Top"\nmenu "Outer"\nmenu "Inner"\nconfig X\n\tbool "x"\nendmenu\n  menuconfig MC\nendmenu\nconfig OUT\n',
    want: [
      'mainMenu Top 1',
      'menu Outer 2-8',
      'menu Inner 3-6 menu:Outer',
      'config CONFIG_X 4 menu:Outer""Inner',
      'config X 4 menu:Outer""Inner',
      'config CONFIG_MC 7 menu:Outer',
      'config MC 7 menu:Outer',
      'config CONFIG_OUT 9',
      'config OUT 9',
    ],
  },
  {
    name: 'named and anonymous choices',
    src: 'menu "M"\nchoice\n\tprompt "pick"\nconfig A\nendchoice\nchoice NAMED\nconfig B\nendchoice\nendmenu\n',
    want: [
      'menu M 1-9',
      'config A 4 choice:M""choice#',
      'config CONFIG_A 4 choice:M""choice#',
      'choice NAMED 6-8 menu:M',
      'config B 7 choice:M""NAMED',
      'config CONFIG_B 7 choice:M""NAMED',
    ],
  },
  {
    name: 'what is not a config line: a comment after the name, another character in it, a commented-out line',
    src: 'config TRAIL # comment\nconfig A-B\n#config COMMENTED\n\tconfig TAB\t\nconfigX Y\n',
    want: ['config CONFIG_TAB 4', 'config TAB 4'],
  },
  {
    name: 'help text is read as any line; a menu left open ends at the last line',
    src: 'menu "Open"\nconfig H\n\thelp\n\t  Say Y.\n\t  config INHELP\n',
    want: ['menu Open 1-5', 'config CONFIG_H 2 menu:Open', 'config H 2 menu:Open', 'config CONFIG_INHELP 5 menu:Open', 'config INHELP 5 menu:Open'],
  },
  {
    name: 'a help line that starts with "choice" and a word is not a choice',
    src: 'menu "M"\nconfig A\n\thelp\n\t  choice and suitable for most users.\nconfig B\nendmenu\n',
    want: ['menu M 1-6', 'config A 2 menu:M', 'config CONFIG_A 2 menu:M', 'config B 5 menu:M', 'config CONFIG_B 5 menu:M'],
    differs: 'ctags takes any line starting `choice NAME` for a named choice, help text included',
  },
  {
    name: 'CRLF line ends',
    src: 'menu "M"\r\nconfig A\r\nendmenu\r\n',
    want: ['menu M 1-3', 'config A 2 menu:M', 'config CONFIG_A 2 menu:M'],
  },
];

for (const c of CASES) {
  test(`Kconfig scanner: ${c.name}`, () => {
    assert.deepEqual(scan(c.src), inScannerOrder(c.want, show));
  });
}

test('Kconfig scanner: ctags gives the same definitions wherever the table says it does, and others where it says why', {
  skip: !ctagsAvailable() && 'universal-ctags is not installed',
}, () => {
  checkAgainstCtags(
    CASES,
    (_, i) => `k${i}/Kconfig`,
    (c) => scan(c.src),
    show,
  );
});

test('Kconfig scanner: which paths it reads, through the one extraction rule; names are where they say', () => {
  for (const p of ['Kconfig', 'drivers/net/Kconfig', 'arch/x86/Kconfig.debug', 'drivers/cpufreq/Kconfig.x86']) assert.equal(isKconfigPath(p), true, p);
  for (const p of ['Makefile', 'Documentation/kbuild/kconfig.rst', 'xKconfig']) assert.equal(isKconfigPath(p), false, p);
  const src = bytes('menu "Net"\nconfig NET\nendmenu\n');
  assert.deepEqual(scannedSymbols('net/Kconfig', src)?.map(show), ['menu Net 1-3', 'config CONFIG_NET 2 menu:Net', 'config NET 2 menu:Net']);
  assert.deepEqual(extractSymbols([{ path: 'Kconfig.arm', content: src }]).symbols[0]!.map(show), [
    'menu Net 1-3',
    'config CONFIG_NET 2 menu:Net',
    'config NET 2 menu:Net',
  ]);
  const defs = sortSymbolDefs(kconfigDefinitions('Kconfig', src));
  const lines = defs.map((d) => d.line);
  const names = defs.map((d) => d.name);
  // CONFIG_NET is not spelled in the file: its range is NET's, as the line rule finds it.
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

test('Kconfig scanner: random bytes and random Kconfig token soup end, and every definition is well formed', () => {
  const pieces = [
    'config ',
    'menuconfig ',
    'menu ',
    'mainmenu ',
    'choice',
    'endchoice',
    'endmenu',
    'A',
    'B_1',
    '"t"',
    '"',
    '#',
    ' ',
    '\t',
    '\n',
    '\r\n',
    'help\n',
    'if X\n',
    'endif\n',
  ];
  let round = 0;
  for (const src of randomInputs(23, pieces, 400)) {
    const lines = Math.max(1, src.toString('latin1').split('\n').length);
    for (const d of kconfigDefinitions('Kconfig', src)) {
      assert.ok(d.name.length > 0 && d.line >= 1 && d.endLine >= d.line && d.endLine <= lines, `round ${round}: ${show(d)}`);
    }
    round++;
  }
});
