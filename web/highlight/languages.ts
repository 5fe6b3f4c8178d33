// Language definitions as data for the generic lexer (format documented in grammar.ts).
// Families share their span lists: C-like languages take SLASH comments and C quotes,
// hash-comment languages take HASH; each language then adds its own word lists and the
// few spans that differ (Go raw strings, Python triple quotes, Rust attributes...).
// Keys are lower-cased GitHub linguist names.
import type { Grammar, Span } from './grammar.ts';

// ---- shared spans ----------------------------------------------------------------------

const LINE_SLASH: Span = { open: '//', cls: 'com' };
const BLOCK: Span = { open: '/*', close: '*/', cls: 'com', ml: true };
const SLASH: Span[] = [LINE_SLASH, BLOCK];
/** Rust, Swift, Kotlin, Scala, Dart: block comments nest. */
const SLASH_NEST: Span[] = [LINE_SLASH, { ...BLOCK, nest: true }];
const HASH: Span = { open: '#', cls: 'com' };
const DQ: Span = { open: '"', close: '"', cls: 'str', esc: 1 };
const SQ: Span = { open: "'", close: "'", cls: 'str', esc: 1 };
/** Single quotes without escapes (shell, TOML literal strings). */
const SQ_RAW: Span = { open: "'", close: "'", cls: 'str' };
/** A one-character literal; `'a` (Rust lifetime, Scala symbol, Haskell promotion) is left plain. */
const CHAR: Span = { open: "'", cls: 'str', kind: 'char' };
const TDQ: Span = { open: '"""', close: '"""', cls: 'str', esc: 1, ml: true };
const TSQ: Span = { open: "'''", close: "'''", cls: 'str', esc: 1, ml: true };
/** Triple quotes without escapes (Kotlin, Scala raw strings, C# raw string literals). */
const TDQ_RAW: Span = { open: '"""', close: '"""', cls: 'str', ml: true };
const BACKTICK_ML: Span = { open: '`', close: '`', cls: 'str', esc: 1, ml: true };
/** C preprocessor: `#include`, `#  define` as the first thing on the line. */
const DIRECTIVE: Span = { open: '#', cls: 'pre', kind: 'word', bol: true, sp: true };
const CPP_NAMES = 'include include_next define undef if ifdef ifndef else elif elifdef elifndef endif error warning pragma line';
/** `@Override`, `@app.route`, `@Component`. */
const ANNOTATION: Span = { open: '@', cls: 'pre', kind: 'word' };
const ml = (s: Span): Span => ({ ...s, ml: true });

// ---- word lists -----------------------------------------------------------------------

const C_KW =
  'auto break case const continue default do else enum extern for goto if inline register restrict return sizeof static struct switch typedef union volatile while ' +
  '_Alignas _Alignof _Atomic _Generic _Noreturn _Static_assert _Thread_local alignas alignof static_assert thread_local typeof typeof_unqual ' +
  'asm __asm__ __attribute__ __inline__ __volatile__ __extension__ __typeof__ __restrict';
const C_TYP =
  'char double float int long short signed unsigned void bool _Bool _Complex size_t ssize_t ptrdiff_t intptr_t uintptr_t ' +
  'int8_t int16_t int32_t int64_t uint8_t uint16_t uint32_t uint64_t wchar_t off_t pid_t FILE ' +
  'u8 u16 u32 u64 s8 s16 s32 s64 __u8 __u16 __u32 __u64 __s8 __s16 __s32 __s64 __le16 __le32 __le64 __be16 __be32 __be64';
const C_LIT = 'NULL true false nullptr';
const CPP_KW =
  C_KW +
  ' and and_eq bitand bitor catch class compl concept consteval constexpr constinit const_cast co_await co_return co_yield decltype delete dynamic_cast explicit export final friend import module mutable namespace new noexcept not not_eq operator or or_eq override private protected public reinterpret_cast requires static_cast template this throw try typeid typename using virtual xor xor_eq';
const CPP_TYP = C_TYP + ' char8_t char16_t char32_t';
const JAVA_KW =
  'abstract assert break case catch class const continue default do else enum extends final finally for goto if implements import instanceof interface native new package permits private protected public record return sealed static strictfp super switch synchronized this throw throws transient try var volatile while yield';
const JAVA_TYP = 'boolean byte char double float int long short void';
const JS_KW =
  'as async await break case catch class const continue debugger default delete do else export extends finally for from function get if import in instanceof let new of return set static super switch this throw try typeof var void while with yield';
const JS_LIT = 'true false null undefined NaN Infinity';
const TS_KW = JS_KW + ' abstract accessor asserts declare enum implements infer interface is keyof module namespace out override private protected public readonly satisfies type unique';
const TS_TYP = 'any bigint boolean never number object string symbol unknown void';
const PY_KW = 'and as assert async await break class continue def del elif else except finally for from global if import in is lambda match case nonlocal not or pass raise return try while with yield';
const PY_TYP = 'int float complex str bytes bytearray bool list dict set frozenset tuple object type memoryview range';

/** Python string prefixes in every letter case: r, u, b, f, br, rb, fr, rf. */
function pyPrefixes(): string {
  const out: string[] = [];
  for (const p of ['r', 'u', 'b', 'f', 'br', 'rb', 'fr', 'rf']) {
    for (let m = 0; m < 1 << p.length; m++) out.push([...p].map((ch, k) => (m & (1 << k) ? ch.toUpperCase() : ch)).join(''));
  }
  return out.join(' ');
}

// ---- grammars -------------------------------------------------------------------------

const c: Grammar = { spans: [...SLASH, DQ, SQ, DIRECTIVE], kw: C_KW, typ: C_TYP, lit: C_LIT, fn: true, include: true, prefixes: 'L u U u8' };
const cpp: Grammar = { ...c, kw: CPP_KW, typ: CPP_TYP, raw: 'cpp' };
const objc: Grammar = {
  ...c,
  spans: [...SLASH, { ...DQ, open: '@"' }, DQ, SQ, DIRECTIVE],
  kw:
    C_KW +
    ' @interface @implementation @end @property @synthesize @dynamic @protocol @optional @required @class @selector @encode @try @catch @finally @throw @autoreleasepool @synchronized @private @public @protected @package @import self super nonatomic atomic strong weak assign copy retain readonly readwrite nullable nonnull instancetype',
  typ: C_TYP + ' id SEL IMP Class BOOL NSInteger NSUInteger CGFloat',
  lit: C_LIT + ' nil Nil YES NO',
  idStart: '@',
  pascal: true,
};
const java: Grammar = { spans: [...SLASH, TDQ, DQ, SQ, ANNOTATION], kw: JAVA_KW, typ: JAVA_TYP, lit: 'true false null', fn: true, pascal: true };
const csharp: Grammar = {
  spans: [
    ...SLASH,
    TDQ_RAW,
    { open: '@"', close: '"', cls: 'str', esc: 2, ml: true },
    { open: '$@"', close: '"', cls: 'str', esc: 2, ml: true },
    { open: '@$"', close: '"', cls: 'str', esc: 2, ml: true },
    { ...DQ, open: '$"' },
    DQ,
    SQ,
    DIRECTIVE,
  ],
  kw:
    'abstract as base break case catch checked class const continue default delegate do else enum event explicit extern finally fixed for foreach goto if implicit in interface internal is lock namespace new operator out override params private protected public readonly ref return sealed sizeof stackalloc static struct switch this throw try typeof unchecked unsafe using virtual volatile while async await var dynamic get set init value yield when where record partial global nameof required file scoped',
  typ: 'bool byte char decimal double float int long object sbyte short string uint ulong ushort void nint nuint',
  lit: 'true false null',
  fn: true,
  pascal: true,
};
const go: Grammar = {
  spans: [...SLASH, { open: '`', close: '`', cls: 'str', ml: true }, DQ, SQ],
  kw: 'break case chan const continue default defer else fallthrough for func go goto if import interface map package range return select struct switch type var',
  typ: 'bool byte complex64 complex128 error float32 float64 int int8 int16 int32 int64 rune string uint uint8 uint16 uint32 uint64 uintptr any comparable',
  lit: 'true false nil iota',
  fn: true,
};
const rust: Grammar = {
  spans: [...SLASH_NEST, { open: '#![', cls: 'pre', kind: 'attr' }, { open: '#[', cls: 'pre', kind: 'attr' }, ml(DQ), CHAR],
  kw: 'as async await break const continue crate dyn else enum extern fn for if impl in let loop match mod move mut pub ref return self Self static struct super trait type unsafe use where while yield macro_rules union',
  typ: 'bool char f32 f64 i8 i16 i32 i64 i128 isize str u8 u16 u32 u64 u128 usize',
  lit: 'true false None',
  prefixes: 'b c',
  raw: 'rust',
  fn: true,
  bang: true,
  pascal: true,
};
const js: Grammar = { spans: [...SLASH, BACKTICK_ML, DQ, SQ, ANNOTATION], kw: JS_KW, lit: JS_LIT, idStart: '$#', regex: true, fn: true, pascal: true };
const ts: Grammar = { ...js, kw: TS_KW, typ: TS_TYP };
const kotlin: Grammar = {
  spans: [...SLASH_NEST, TDQ_RAW, DQ, SQ, ANNOTATION],
  kw:
    'as break class continue do else for fun if in interface is object package return super this throw try typealias typeof val var when while by catch constructor delegate dynamic field file finally get import init param property receiver set setparam where actual abstract annotation companion const crossinline data enum expect external final infix inline inner internal lateinit noinline open operator out override private protected public reified sealed suspend tailrec vararg value',
  lit: 'true false null',
  fn: true,
  pascal: true,
};
const swift: Grammar = {
  spans: [...SLASH_NEST, TDQ, DQ, ANNOTATION, { open: '#', cls: 'pre', kind: 'word' }],
  kw:
    'associatedtype class deinit enum extension fileprivate func import init inout internal let open operator private precedencegroup protocol public rethrows static struct subscript typealias var break case catch continue default defer do else fallthrough for guard if in repeat return throw switch where while as is super self Self throws try async await actor some any convenience dynamic final lazy mutating nonmutating optional override required unowned weak get set willSet didSet',
  lit: 'true false nil',
  fn: true,
  pascal: true,
};
const scala: Grammar = {
  spans: [...SLASH_NEST, TDQ_RAW, DQ, CHAR, ANNOTATION],
  kw: 'abstract case catch class def do else enum export extends extension final finally for forSome given if implicit import lazy match new object opaque override package private protected return sealed super then this throw trait try type using val var while with yield derives end inline transparent',
  lit: 'true false null',
  prefixes: 's f raw',
  fn: true,
  pascal: true,
};
const dart: Grammar = {
  spans: [...SLASH_NEST, TDQ, TSQ, DQ, SQ, ANNOTATION],
  kw: 'abstract as assert async await base break case catch class const continue covariant default deferred do else enum export extends extension external factory final finally for get hide if implements import in interface is late library mixin new on operator part required rethrow return sealed set show static super switch sync this throw try typedef var when while with yield',
  typ: 'int double num bool dynamic void Never Null Object String List Map Set Future Stream Function',
  lit: 'true false null',
  prefixes: 'r',
  fn: true,
  pascal: true,
};
const zig: Grammar = {
  // `\\` starts a line of a multi-line string literal; `@name` is a builtin, `@"x"` a quoted identifier.
  spans: [LINE_SLASH, { open: '\\\\', cls: 'str' }, DQ, SQ, { ...DQ, open: '@"' }, { open: '@', cls: 'pre', kind: 'word' }],
  kw: 'addrspace align allowzero and anyframe anytype asm async await break callconv catch comptime const continue defer else enum errdefer error export extern fn for if inline linksection noalias noinline nosuspend opaque or orelse packed pub resume return struct suspend switch test threadlocal try union unreachable usingnamespace var volatile while',
  typ: 'i8 u8 i16 u16 i32 u32 i64 u64 i128 u128 isize usize c_char c_short c_ushort c_int c_uint c_long c_ulong c_longlong c_ulonglong f16 f32 f64 f80 f128 bool void noreturn type anyerror anyopaque comptime_int comptime_float',
  lit: 'true false null undefined',
  fn: true,
  pascal: true,
};
const proto: Grammar = {
  spans: [...SLASH, DQ, SQ],
  kw: 'syntax edition package import public weak option message enum service rpc returns stream oneof map repeated optional required reserved extensions extend to max group',
  typ: 'double float int32 int64 uint32 uint64 sint32 sint64 fixed32 fixed64 sfixed32 sfixed64 bool string bytes',
  lit: 'true false',
  pascal: true,
};
const php: Grammar = {
  spans: [
    ...SLASH,
    { open: '#[', cls: 'pre', kind: 'attr' },
    HASH,
    { open: '<?php', cls: 'pre', kind: 'tok' },
    { open: '<?=', cls: 'pre', kind: 'tok' },
    { open: '?>', cls: 'pre', kind: 'tok' },
    { open: '<<<', cls: 'str', kind: 'heredoc' },
    ml(DQ),
    ml(SQ),
  ],
  kw: 'abstract and array as break callable case catch class clone const continue declare default do echo else elseif empty enddeclare endfor endforeach endif endswitch endwhile enum extends final finally fn for foreach function global goto if implements include include_once instanceof insteadof interface isset list match namespace new or print private protected public readonly require require_once return static switch throw trait try unset use var while xor yield',
  typ: 'int float bool string void mixed never object iterable self parent',
  lit: 'true false null TRUE FALSE NULL',
  idStart: '$',
  fn: true,
  pascal: true,
};
const dts: Grammar = {
  spans: [
    ...SLASH,
    DQ,
    SQ,
    { ...DIRECTIVE, names: CPP_NAMES },
    ...['/dts-v1/', '/plugin/', '/include/', '/delete-node/', '/delete-property/', '/memreserve/', '/omit-if-no-ref/', '/bits/'].map((open): Span => ({ open, cls: 'kw', kind: 'tok' })),
  ],
  lit: 'true false',
  // Property and node names: `#address-cells`, `linux,code`, `interrupt-parent`.
  idStart: '#',
  idPart: '-,#',
  include: true,
  mode: 'assign',
};
const python: Grammar = {
  spans: [HASH, TDQ, TSQ, DQ, SQ, { ...ANNOTATION, bol: true }],
  kw: PY_KW,
  typ: PY_TYP,
  lit: 'True False None',
  prefixes: pyPrefixes(),
  fn: true,
  pascal: true,
};
const ruby: Grammar = {
  spans: [
    HASH,
    { open: '=begin', close: '=end', cls: 'com', col0: true, ml: true },
    { open: '<<', cls: 'str', kind: 'heredoc' },
    // Strings may span lines in Ruby, but regex and %-literals are not lexed: a quote in
    // one of them must not flip every later string, so strings end with their line.
    DQ,
    SQ,
    { open: '`', close: '`', cls: 'str', esc: 1 },
    { open: ':', cls: 'lit', kind: 'sym' },
  ],
  kw: 'BEGIN END alias and begin break case class def defined? do else elsif end ensure for if in module next not or redo rescue retry return self super then undef unless until when while yield __method__ require require_relative include extend attr_accessor attr_reader attr_writer private protected public raise lambda proc loop',
  lit: 'true false nil',
  idStart: '@$',
  idPart: '?!',
  fn: true,
  pascal: true,
};
const perl: Grammar = {
  spans: [
    { ...HASH, ws: true },
    // POD: from any =command at column 0 to =cut.
    ...['=pod', '=head', '=begin', '=item', '=over', '=encoding', '=for', '=back'].map((open): Span => ({ open, close: '=cut', cls: 'com', col0: true, ml: true })),
    { open: '<<', cls: 'str', kind: 'heredoc' },
    // Single-line, as in Ruby: s/'//g, tr/"// and q{} are not lexed.
    DQ,
    SQ,
    { open: '`', close: '`', cls: 'str', esc: 1 },
  ],
  kw: 'my our local sub if elsif else unless while until for foreach do last next redo return use no require package BEGIN END and or not eq ne lt gt le ge cmp x qw q qq m s tr y print die warn eval defined ref bless shift push pop wantarray exists delete keys values each scalar chomp split join',
  lit: 'undef',
  idStart: '$@%',
  fn: true,
};
const shell: Grammar = {
  spans: [
    { ...HASH, ws: true },
    { open: '<<', cls: 'str', kind: 'heredoc', sp: true },
    { open: "$'", close: "'", cls: 'str', esc: 1 },
    { open: '\\', cls: '', kind: 'esc' },
    ml(SQ_RAW),
    ml(DQ),
    BACKTICK_ML,
  ],
  kw: 'if then else elif fi for while until do done case esac function in select return local export readonly declare typeset set unset shift exit break continue eval exec source trap',
  lit: 'true false',
  idPart: '-',
  fn: true,
};
const makefile: Grammar = {
  spans: [
    HASH,
    { open: '$(', cls: 'pre', kind: 'word' },
    { open: '${', cls: 'pre', kind: 'word' },
    { open: '$', cls: 'pre', kind: 'cp' },
    DQ,
    SQ_RAW,
  ],
  kw: 'ifeq ifneq ifdef ifndef else endif include sinclude define endef export unexport override private vpath',
  idPart: '-',
  mode: 'make',
};
const dockerfile: Grammar = {
  spans: [{ ...HASH, bol: true }, { open: '<<', cls: 'str', kind: 'heredoc' }, DQ, SQ],
  kw: 'from run cmd label maintainer expose env add copy entrypoint volume user workdir arg onbuild stopsignal healthcheck shell',
  ci: true,
  kwBol: true,
  idPart: '-',
};
const kconfig: Grammar = {
  spans: [HASH, DQ, SQ],
  kw: 'config menuconfig choice endchoice comment menu endmenu if endif source rsource osource orsource mainmenu depends on select imply visible default def_bool def_tristate prompt range help option modules optional transitional',
  typ: 'bool tristate string hex int',
  lit: 'y n m',
  mode: 'kconfig',
};
const toml: Grammar = { spans: [HASH, TDQ, { open: "'''", close: "'''", cls: 'str', ml: true }, DQ, SQ_RAW], lit: 'true false inf nan', mode: 'toml' };
const ini: Grammar = { spans: [{ open: ';', cls: 'com', bol: true }, { ...HASH, bol: true }, DQ], lit: 'true false yes no on off', mode: 'ini' };
const json: Grammar = { spans: [DQ], lit: 'true false null', mode: 'json' };
const jsonc: Grammar = { ...json, spans: [...SLASH, DQ] };
const json5: Grammar = { ...json, spans: [...SLASH, DQ, SQ], lit: 'true false null Infinity NaN' };
const sql: Grammar = {
  spans: [
    { open: '--', cls: 'com' },
    BLOCK,
    { open: "'", close: "'", cls: 'str', esc: 2, ml: true },
    { open: '"', close: '"', cls: 'str', esc: 2 },
    { open: '`', close: '`', cls: 'str' },
    { open: '$$', close: '$$', cls: 'str', ml: true },
  ],
  kw: 'select from where and or not insert into values update set delete create table drop alter add column index view primary key foreign references join inner left right outer full cross on as group by order having limit offset union all distinct case when then else end is in exists between like ilike begin commit rollback transaction if returns return function procedure trigger declare grant revoke with recursive default constraint unique check cascade database schema replace temporary temp using natural asc desc fetch next rows only over partition window lateral returning conflict do nothing language',
  typ: 'int integer bigint smallint tinyint serial bigserial decimal numeric real float double precision char varchar text boolean bool date time timestamp timestamptz interval uuid json jsonb bytea blob clob',
  lit: 'null true false',
  ci: true,
  fn: true,
};
const lua: Grammar = {
  spans: [{ open: '--[', cls: 'com', kind: 'lua', ml: true }, { open: '--', cls: 'com' }, { open: '[', cls: 'str', kind: 'lua', ml: true }, DQ, SQ],
  kw: 'and break do else elseif end for function goto if in local not or repeat return then until while',
  lit: 'true false nil',
  fn: true,
};
const r: Grammar = {
  // Backtick names are consumed whole (cls '' = plain) so nothing inside them is lexed.
  spans: [HASH, ml(DQ), ml(SQ), { open: '`', close: '`', cls: '' }],
  kw: 'if else repeat while function for in next break return',
  lit: 'TRUE FALSE NULL NA NaN Inf NA_integer_ NA_real_ NA_character_',
  idPart: '.',
  fn: true,
};
const haskell: Grammar = {
  spans: [
    { open: '{-#', close: '#-}', cls: 'pre', ml: true },
    { open: '{-', close: '-}', cls: 'com', ml: true, nest: true },
    { open: '--', cls: 'com' },
    DQ,
    CHAR,
  ],
  kw: 'case class data default deriving do else family forall foreign hiding if import in infix infixl infixr instance let mdo module newtype of pattern qualified role then type where',
  idPart: "'",
  pascal: true,
};
const elixir: Grammar = {
  // Multi-line text uses triple-quoted heredocs; "…" stays on its line since sigils (~r/"/) are not lexed.
  spans: [HASH, TDQ, TSQ, DQ, SQ, { open: '?', cls: 'str', kind: 'cp' }, { open: ':', cls: 'lit', kind: 'sym' }, ANNOTATION],
  kw: 'after and catch do else end fn in not or rescue when cond case if unless def defp defmodule defmacro defmacrop defstruct defprotocol defimpl defdelegate defguard defexception defoverridable import require alias use quote unquote receive try with for raise throw',
  lit: 'true false nil',
  idPart: '?!',
  fn: true,
  pascal: true,
};
const erlang: Grammar = {
  spans: [
    { open: '%', cls: 'com' },
    ml(DQ),
    SQ,
    { open: '$', cls: 'str', kind: 'cp' },
    { open: '-', cls: 'pre', kind: 'word', bol: true },
    { open: '?', cls: 'pre', kind: 'word' },
  ],
  kw: 'after and andalso band begin bnot bor bsl bsr bxor case catch cond div else end fun if let maybe not of or orelse receive rem try when xor',
  lit: 'true false',
  fn: true,
};
const vim: Grammar = {
  spans: [{ open: '"', cls: 'com', bol: true }, { ...HASH, bol: true }, { open: '"', close: '"', cls: 'str', esc: 1 }, { open: "'", close: "'", cls: 'str', esc: 2 }],
  kw: 'function endfunction func endfunc fu endf if elseif else endif en for endfor while endwhile try catch finally endtry return let unlet const call execute exe echo echom echomsg set setlocal augroup autocmd au command com map nmap nnoremap vnoremap inoremap noremap xnoremap onoremap tnoremap silent normal syntax highlight hi source runtime abort range dict closure def enddef var vim9script export import in is isnot',
  lit: 'v:true v:false v:null true false null',
  idPart: ':#',
  fn: true,
};
const nasm: Grammar = {
  spans: [{ open: ';', cls: 'com' }, { open: '%', cls: 'pre', kind: 'word', bol: true }, DQ, SQ, { open: '`', close: '`', cls: 'str', esc: 1 }],
  idStart: '.',
  idPart: '.$@',
  mode: 'asm',
};
const gas: Grammar = {
  spans: [
    ...SLASH,
    { ...DIRECTIVE, names: CPP_NAMES },
    // x86 `# comment`, ARM `@ comment`; `#4` and `@function` are operands.
    { ...HASH, bol: true },
    { ...HASH, wsAfter: true },
    { open: '@', cls: 'com', wsAfter: true },
    DQ,
    CHAR,
  ],
  idStart: '.%',
  idPart: '.$',
  include: true,
  mode: 'asm',
};
const css: Grammar = {
  spans: [BLOCK, DQ, SQ, { open: '@', cls: 'pre', kind: 'word' }, { open: '#', cls: 'num', kind: 'hex' }],
  kw: '!important',
  lit: 'inherit initial unset revert auto none transparent currentcolor',
  idStart: '-!',
  idPart: '-',
  fn: true,
  mode: 'css',
};
const scss: Grammar = { ...css, spans: [{ ...LINE_SLASH, ws: true }, ...css.spans], idStart: '-!$' };
const hcl: Grammar = {
  spans: [HASH, ...SLASH, { open: '<<', cls: 'str', kind: 'heredoc' }, DQ],
  kw: 'resource data variable output module provider locals terraform for in if else endif endfor',
  lit: 'true false null',
  fn: true,
  mode: 'assign',
};
const groovy: Grammar = { ...java, spans: [...SLASH, TDQ, TSQ, DQ, SQ, ANNOTATION], kw: JAVA_KW + ' def in as trait' };
// Module paths and versions (golang.org/x/net v0.1.0-pre+incompatible) are single words.
const gomod: Grammar = { spans: [LINE_SLASH, DQ, { open: '`', close: '`', cls: 'str' }], kw: 'module go toolchain require replace exclude retract godebug tool', idPart: './-+' };

/** Grammars by lower-cased linguist name. */
export const GRAMMARS: Record<string, Grammar> = {
  c,
  'c++': cpp,
  cuda: cpp,
  glsl: c,
  opencl: c,
  'objective-c': objc,
  'objective-c++': { ...objc, kw: objc.kw + ' ' + CPP_KW, raw: 'cpp' },
  java,
  groovy,
  gradle: groovy,
  'c#': csharp,
  go,
  'go module': gomod,
  rust,
  javascript: js,
  typescript: ts,
  tsx: ts,
  kotlin,
  swift,
  scala,
  dart,
  zig,
  'protocol buffer': proto,
  php,
  'device tree': dts,
  python,
  starlark: python,
  ruby,
  crystal: ruby,
  perl,
  shell,
  makefile,
  dockerfile,
  kconfig,
  toml,
  ini,
  'git config': ini,
  json,
  'json with comments': jsonc,
  json5,
  sql,
  lua,
  r,
  haskell,
  elixir,
  erlang,
  'vim script': vim,
  assembly: nasm,
  'unix assembly': gas,
  css,
  scss,
  less: scss,
  hcl,
  'ignore list': { spans: [{ ...HASH, bol: true }] },
};

/** Other names a Markdown fence (```ts) or a caller may use, lower case, to linguist names. */
export const ALIASES: Record<string, string> = {
  h: 'c',
  cpp: 'c++',
  cxx: 'c++',
  cc: 'c++',
  hpp: 'c++',
  cu: 'cuda',
  objc: 'objective-c',
  objectivec: 'objective-c',
  'obj-c': 'objective-c',
  kt: 'kotlin',
  kts: 'kotlin',
  cs: 'c#',
  csharp: 'c#',
  golang: 'go',
  gomod: 'go module',
  rs: 'rust',
  js: 'javascript',
  jsx: 'javascript',
  mjs: 'javascript',
  cjs: 'javascript',
  node: 'javascript',
  ts: 'typescript',
  mts: 'typescript',
  proto: 'protocol buffer',
  protobuf: 'protocol buffer',
  dts: 'device tree',
  py: 'python',
  python3: 'python',
  bzl: 'starlark',
  bazel: 'starlark',
  rb: 'ruby',
  cr: 'crystal',
  pl: 'perl',
  sh: 'shell',
  bash: 'shell',
  zsh: 'shell',
  ksh: 'shell',
  'shell-script': 'shell',
  make: 'makefile',
  mk: 'makefile',
  docker: 'dockerfile',
  containerfile: 'dockerfile',
  cfg: 'ini',
  gitconfig: 'git config',
  jsonc: 'json with comments',
  hs: 'haskell',
  ex: 'elixir',
  exs: 'elixir',
  erl: 'erlang',
  vim: 'vim script',
  viml: 'vim script',
  vimscript: 'vim script',
  asm: 'assembly',
  nasm: 'assembly',
  gas: 'unix assembly',
  tf: 'hcl',
  terraform: 'hcl',
  yml: 'yaml',
  md: 'markdown',
  htm: 'html',
  xhtml: 'html',
  patch: 'diff',
  udiff: 'diff',
};
