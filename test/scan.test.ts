import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { pathToFileURL } from 'node:url';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { decompress as zstdDecompress, init as initZstd } from '@bokuweb/zstd-wasm';

await initZstd();
import {
  scanScript, scanScriptBytes, FINDING_CODES, isHangRisk, MAX_FINDINGS_PER_SCRIPT, type Finding, type FindingCode, type ScanOptions,
} from '../src/scan/index.js';
import {
  tokenize, tokenText, NAME, NUMBER, STRING, INTERP_BEGIN, INTERP_MID, INTERP_END, LPAREN, RPAREN, LBRACE, RBRACE, LBRACKET,
  RBRACKET, COLON, ASSIGN, COMPOUND_ASSIGN, ARROW, DOUBLE_COLON, CONCAT, ELLIPSIS, ARITH, COMPARE,
  KW_WHILE, KW_TRUE, KW_DO, KW_END, KW_LOCAL,
} from '../src/scan/tokenizer.js';
import { scannerMemoryBytes, MAX_SOURCE_BYTES } from '../src/scan/wasm.js';
import { SCANNER_VERSION, scannerFingerprint } from '../src/scan/version.js';
import { PLACES_DIR, TEST_FILES_DIR } from './support/paths.js';

type Expected = Array<[FindingCode, number]>;
interface Case { name: string; source: string; options?: ScanOptions; expect: Expected }

const SERVER_SCRIPT: ScanOptions = { className: 'Script' };

/** Findings as [code, line] pairs, after checking their shape against the source. */
function scan(source: string, options?: ScanOptions): Expected {
  const findings = scanScript(source, options);
  assertWellFormed(findings, source);
  return findings.map((f) => [f.code, f.line]);
}

function assertWellFormed(findings: Finding[], source: string): void {
  const lineCount = source.split('\n').length;
  assert.ok(findings.length <= MAX_FINDINGS_PER_SCRIPT, `${findings.length} findings`);
  const seen = new Set<string>();
  let previous = 0;
  for (const f of findings) {
    assert.ok(FINDING_CODES.includes(f.code), `unknown code ${f.code}`);
    assert.ok(Number.isInteger(f.line) && f.line >= 1 && f.line <= lineCount, `line ${f.line} of ${lineCount}`);
    assert.ok(f.line >= previous, 'findings are sorted by line');
    previous = f.line;
    assert.equal(typeof f.message, 'string');
    assert.ok(f.message.length > 0 && f.message.length < 300 && !f.message.includes('\n'), f.message);
    const key = `${f.code}@${f.line}`;
    assert.ok(!seen.has(key), `duplicate ${key}`);
    seen.add(key);
  }
}

function runCases(cases: Case[]): void {
  for (const c of cases) {
    test(c.name, () => assert.deepEqual(scan(c.source, c.options), c.expect));
  }
}

describe('loop_without_yield', () => {
  runCases([
    { name: 'while true without a yield', source: 'while true do\n  x = x + 1\nend', expect: [['loop_without_yield', 1]] },
    { name: 'while 1', source: 'local n = 0\nwhile 1 do n += 1 end', expect: [['loop_without_yield', 2]] },
    { name: 'while with a string condition', source: 'while "forever" do end', expect: [['loop_without_yield', 1]] },
    { name: 'while not false', source: 'while not false do end', expect: [['loop_without_yield', 1]] },
    { name: 'while (not nil)', source: 'while (not nil) do end', expect: [['loop_without_yield', 1]] },
    { name: 'while ((true))', source: 'while ((true)) do end', expect: [['loop_without_yield', 1]] },
    { name: 'repeat until false', source: 'repeat\n  x += 1\nuntil false', expect: [['loop_without_yield', 1]] },
    { name: 'repeat until (nil)', source: 'repeat\nuntil (nil)\nprint(1)', expect: [['loop_without_yield', 1]] },
    { name: 'repeat until not true', source: 'repeat x() until not true', expect: [['loop_without_yield', 1]] },
    { name: 'numeric for to math.huge', source: 'for i = 1, math.huge do\n  print(i)\nend', expect: [['loop_without_yield', 1]] },
    {
      name: 'a yield inside a nested function does not yield the loop',
      source: 'while true do\n  task.spawn(function() task.wait() end)\nend',
      expect: [['loop_without_yield', 1]],
    },
    {
      name: 'task.spawn, task.defer and coroutine.wrap do not yield',
      source: 'while true do\n  task.spawn(f)\n  task.defer(g)\n  coroutine.wrap(h)()\nend',
      expect: [['loop_without_yield', 1]],
    },
    {
      name: 'a break of a nested loop does not end the outer loop',
      source: 'while true do\n  for i = 1, 3 do\n    if i == 2 then break end\n  end\nend',
      expect: [['loop_without_yield', 1]],
    },
    {
      name: 'a return inside a nested function does not end the loop',
      source: 'while true do\n  local ok = (function() return 1 end)()\nend',
      expect: [['loop_without_yield', 1]],
    },
    {
      name: 'continue does not end the loop',
      source: 'while true do\n  if skip then continue end\n  count += 1\nend',
      expect: [['loop_without_yield', 1]],
    },
    {
      name: 'a loop in a function that is called',
      source: 'local function run()\n  while true do\n    step()\n  end\nend\nrun()',
      expect: [['loop_without_yield', 2]],
    },
    {
      name: 'a loop in a function handed to task.spawn',
      source: 'local function run()\n  while true do end\nend\ntask.spawn(run)',
      expect: [['loop_without_yield', 2]],
    },
    {
      name: 'a loop in an anonymous function',
      source: 'task.spawn(function()\n  while true do\n  end\nend)',
      expect: [['loop_without_yield', 2]],
    },
    {
      name: 'a loop in a module method',
      source: 'local M = {}\nfunction M:run()\n  while true do end\nend\nreturn M',
      expect: [['loop_without_yield', 3]],
    },
    {
      name: 'the inner loop is reported, the outer one yields through it',
      source: 'while true do\n  while true do end\n  wait()\nend',
      expect: [['loop_without_yield', 2], ['deprecated_global', 3]],
    },
    {
      name: 'an if expression has no end of its own',
      source: 'local function f()\n  local x = if a then 1 elseif b then 2 else 3\nend\nwhile true do end',
      expect: [['loop_without_yield', 4]],
    },
    {
      name: 'nested if expressions',
      source: 'local function f()\n  return if a then if b then 1 else 2 else (if c then 3 else 4)\nend\nwhile true do end',
      expect: [['loop_without_yield', 4]],
    },
    {
      name: 'a loop and a deprecated call on one line come hang risk first',
      source: 'spawn(function() while true do end end)',
      expect: [['loop_without_yield', 1], ['deprecated_global', 1]],
    },
  ]);

  runCases([
    { name: 'not in a double-quoted string', source: 'local s = "while true do end"', expect: [] },
    { name: 'not in a single-quoted string', source: "local s = 'while true do end'", expect: [] },
    { name: 'not in a backtick string', source: 'local s = `while true do {x} end`', expect: [] },
    { name: 'not in a short comment', source: '-- while true do end\nprint(1)', expect: [] },
    { name: 'not in a long comment', source: '--[[\nwhile true do end\n]]\nprint(1)', expect: [] },
    { name: 'not in a leveled long comment', source: '--[==[\nwhile true do end ]]\n]==]', expect: [] },
    { name: 'not in a long string', source: 'local s = [[\nwhile true do end\n]]', expect: [] },
    { name: 'not in a leveled long string', source: 'local s = [=[ while true do end ]] ]=]', expect: [] },
    { name: 'task.wait yields', source: 'while true do task.wait() end', expect: [] },
    { name: ':Wait() yields', source: 'while true do\n  RunService.Heartbeat:Wait()\nend', expect: [] },
    { name: 'coroutine.yield yields', source: 'while true do coroutine.yield() end', expect: [] },
    { name: 'an Async call yields', source: 'while true do local v = store:GetAsync(key) end', expect: [] },
    {
      name: 'a yield inside a nested if counts',
      source: 'while true do\n  if ready then\n    task.wait(0.1)\n  end\nend',
      expect: [],
    },
    {
      name: 'a yield inside a nested loop counts',
      source: 'while true do\n  for _, part in parts do\n    task.wait()\n  end\nend',
      expect: [],
    },
    { name: 'a break of its own', source: 'while true do\n  if done then break end\nend', expect: [] },
    { name: 'a return of its own', source: 'local function f()\n  while true do\n    if done then return end\n  end\nend\nf()', expect: [] },
    {
      name: 'a return inside a nested loop still leaves the function',
      source: 'local function f()\n  while true do\n    for i = 1, 3 do return i end\n  end\nend\nf()',
      expect: [],
    },
    { name: 'a while true inside a function that is only defined', source: 'local function spin()\n  while true do end\nend', expect: [] },
    { name: 'an only-defined function value', source: 'local spin = function()\n  while true do end\nend', expect: [] },
    { name: 'an only-defined global function that recurses', source: 'function spin()\n  while true do spin() end\nend', expect: [] },
    {
      name: 'a call to a function of the script that yields',
      source: 'local function step()\n  task.wait(1)\nend\nwhile true do\n  step()\nend',
      expect: [],
    },
    { name: 'a condition that is not constant', source: 'while running do end\nwhile true and running do end', expect: [] },
    { name: 'while false', source: 'while false do end', expect: [] },
    { name: 'repeat until a condition', source: 'repeat x() until done\nrepeat x() until false == done', expect: [] },
    { name: 'a for loop to a bound', source: 'for i = 1, 10 do end\nfor _, v in pairs(t) do end', expect: [] },
  ]);
});

describe('deprecated_global', () => {
  runCases([
    {
      name: 'each deprecated global',
      source: [
        'wait(1)', 'spawn(f)', 'delay(1, f)', 'ypcall(f)', 'print(elapsedTime())', 'print(version())',
        'local s = stats()', 'printidentity()', 'local lib = LoadLibrary("RbxUtility")', 'Game.Workspace.Part:Destroy()',
      ].join('\n'),
      expect: [
        ['deprecated_global', 1], ['deprecated_global', 2], ['deprecated_global', 3], ['deprecated_global', 4],
        ['deprecated_global', 5], ['deprecated_global', 6], ['deprecated_global', 7], ['deprecated_global', 8],
        ['deprecated_global', 9], ['deprecated_global', 10],
      ],
    },
    { name: 'a reference without a call', source: 'local w = wait', expect: [['deprecated_global', 1]] },
    { name: 'after the local that shadowed it goes out of scope', source: 'do\n  local wait = task.wait\nend\nwait(1)', expect: [['deprecated_global', 4]] },
    {
      name: 'in the else branch after a local in the then branch',
      source: 'if fast then\n  local wait = task.wait\n  wait()\nelse\n  wait()\nend',
      expect: [['deprecated_global', 5]],
    },
    {
      name: 'after a block that holds an if expression',
      source: 'do\n  local wait = task.wait\n  local n = if fast then 1 else 2\nend\nwait(1)',
      expect: [['deprecated_global', 5]],
    },
    { name: 'outside the function whose parameter shadowed it', source: 'local function f(wait)\n  wait()\nend\nwait()', expect: [['deprecated_global', 4]] },
  ]);
  runCases([
    { name: 'wait as a field', source: 'obj.wait(1)\nobj.wait = nil\nprint(obj.spawn)', expect: [] },
    { name: ':Wait() is not a global', source: 'signal:Wait()', expect: [] },
    { name: 'a table key', source: 'local t = { wait = 1, spawn = 2, version = "1.0" }', expect: [] },
    { name: 'a shadowing local', source: 'local wait = task.wait\nwait(1)\nlocal version = 3\nprint(version)', expect: [] },
    { name: 'a shadowing local function', source: 'local function delay(t)\n  task.wait(t)\nend\ndelay(1)', expect: [] },
    { name: 'a parameter', source: 'local function f(a, wait)\n  wait()\nend\nf()', expect: [] },
    { name: 'a typed parameter', source: 'local function f(stats: Stats)\n  print(stats)\nend\nf()', expect: [] },
    { name: 'a loop variable', source: 'for _, spawn in ipairs(spawns) do\n  print(spawn)\nend', expect: [] },
    { name: 'a type field', source: 'type Options = { wait: number, delay: number? }', expect: [] },
    { name: 'a function the script defines', source: 'function wait(t)\n  task.wait(t)\nend\nwait(1)', expect: [] },
    { name: 'a global the script assigns', source: 'version = "2.1"\nprint(version)', expect: [] },
    { name: 'in a string', source: 'print("wait(1)")', expect: [] },
  ]);
});

describe('legacy_method', () => {
  runCases([
    {
      name: 'lowercase methods',
      source: [
        'part.Touched:connect(f)', 'local h = model:findFirstChild("Humanoid")', 'local c = part:clone()',
        'part:remove()', 'for _, c in ipairs(model:getChildren()) do end', 'if hit:isA("Part") then end',
        'local p = game:service("Players")', 'model:makeJoints()', 'signal:wait()',
      ].join('\n'),
      expect: [
        ['legacy_method', 1], ['legacy_method', 2], ['legacy_method', 3], ['legacy_method', 4], ['legacy_method', 5],
        ['legacy_method', 6], ['legacy_method', 7], ['legacy_method', 8], ['legacy_method', 9],
      ],
    },
  ]);
  runCases([
    { name: 'current methods', source: 'part.Touched:Connect(f)\nlocal c = part:Clone()\nmodel:FindFirstChild("x")', expect: [] },
    { name: 'a field named like a legacy method', source: 'local f = signal.connect\nobj.clone = nil', expect: [] },
    { name: 'a method definition', source: 'local Signal = {}\nfunction Signal:connect(f) end\nreturn Signal', expect: [] },
  ]);
  // A method the script defines itself is its own, not Roblox's legacy one: only receivers that can be a
  // Roblox object (rooted in game/workspace/script/plugin, or the result of a call or index) still count.
  runCases([
    { name: 'a call of a method the script defines', source: 'local obj = {}\nfunction obj:wait() end\nobj:wait()', expect: [] },
    { name: 'called before it is defined', source: 'obj:clone()\nfunction obj:clone() return obj end', expect: [] },
    { name: 'through self inside the class', source: 'local mt = {}\nfunction mt:disconnect() end\nfunction mt:destroy()\n  self:disconnect()\nend', expect: [] },
    { name: 'defined as a field function', source: 'local S = {}\nS.connect = function(self, f) end\nS:connect(print)', expect: [] },
    { name: 'defined in a table constructor', source: 'local t = { remove = function(self) end }\nt:remove()', expect: [] },
    { name: 'on a field of a local', source: 'function Class.remove(self) end\nself.item:remove()', expect: [] },
    {
      name: 'the same name on a Roblox object still counts',
      source: [
        'local S = {}', 'function S:remove() end', 'S:remove()', 'script.Parent:remove()', 'workspace.Part:remove()',
        'game.Workspace.Model:remove()', 'x:FindFirstChild("a"):remove()', 'parts[1]:remove()', 'Workspace.Base:remove()', 'plugin:remove()',
      ].join('\n'),
      expect: [
        ['legacy_method', 4], ['legacy_method', 5], ['legacy_method', 6], ['legacy_method', 7], ['legacy_method', 8],
        ['deprecated_global', 9], ['legacy_method', 9], ['legacy_method', 10],
      ],
    },
    {
      name: 'only the names the script defines are exempt',
      source: 'local obj = {}\nfunction obj:wait() end\nobj:wait()\nobj:clone()\nobj.Touched:connect(f)',
      expect: [['legacy_method', 4], ['legacy_method', 5]],
    },
    { name: 'a local function of the name is not a method', source: 'local function connect() end\nsignal:connect(f)', expect: [['legacy_method', 2]] },
    { name: 'a global function of the name is not a method', source: 'function wait() end\nsignal:wait()', expect: [['legacy_method', 2]] },
  ]);
  test('the message names the replacement', () => {
    const [finding] = scanScript('part.Touched:connect(f)');
    assert.ok(finding);
    assert.match(finding.message, /:Connect/);
  });
});

describe('local_player_on_server', () => {
  const source = 'local player = game.Players.LocalPlayer';
  runCases([
    { name: 'a Script with the default RunContext', source, options: SERVER_SCRIPT, expect: [['local_player_on_server', 1]] },
    { name: 'a Script with RunContext Legacy', source, options: { className: 'Script', runContext: 'Legacy' }, expect: [['local_player_on_server', 1]] },
    { name: 'a Script with RunContext Server', source, options: { className: 'Script', runContext: 'Server' }, expect: [['local_player_on_server', 1]] },
    { name: 'a Script with RunContext Client', source, options: { className: 'Script', runContext: 'Client' }, expect: [] },
    { name: 'a LocalScript', source, options: { className: 'LocalScript' }, expect: [] },
    { name: 'a ModuleScript', source, options: { className: 'ModuleScript' }, expect: [] },
    { name: 'no class given', source, expect: [] },
  ]);
});

describe('external_code', () => {
  runCases([
    { name: 'require by asset id', source: 'local m = require(123456)\nm.start()', expect: [['external_code', 1]] },
    { name: 'require by hex id', source: '\nrequire(0x1F)', expect: [['external_code', 2]] },
    { name: 'an empty source', source: '', expect: [['external_code', 1]] },
    { name: 'a blank source', source: '  \n\t\n', expect: [['external_code', 1]] },
    { name: 'a LinkedSource', source: 'print(1)', options: { linkedSource: 'rbxassetid://1818' }, expect: [['external_code', 1]] },
  ]);
  runCases([
    { name: 'require of a module in the file', source: 'local m = require(script.Parent.Module)', expect: [] },
    { name: 'require of a path', source: 'local m = require(game.ReplicatedStorage:WaitForChild("M"))', expect: [] },
    { name: 'a blank LinkedSource', source: 'print(1)', options: { linkedSource: '  ' }, expect: [] },
  ]);
  test('the LinkedSource message quotes it', () => {
    const [finding] = scanScript('', { linkedSource: 'rbxassetid://1818' });
    assert.ok(finding);
    assert.match(finding.message, /rbxassetid:\/\/1818/);
  });
});

describe('dynamic_code', () => {
  runCases([
    { name: 'loadstring, getfenv, setfenv', source: 'loadstring(code)()\nlocal env = getfenv(2)\nsetfenv(f, env)', expect: [['dynamic_code', 1], ['dynamic_code', 2], ['dynamic_code', 3]] },
  ]);
  runCases([
    { name: 'as fields or a local', source: 'print(lib.loadstring)\nlocal getfenv = nil\nprint(getfenv)', expect: [] },
  ]);
});

describe('platform_service', () => {
  runCases([
    {
      name: 'each platform service',
      source: [
        'local Http = game:GetService("HttpService")', "local Stores = game:GetService('DataStoreService')",
        'local Market = game.MarketplaceService', 'local M = game:GetService("MessagingService")',
        'local T = game:GetService([[TeleportService]])',
      ].join('\n'),
      expect: [['platform_service', 1], ['platform_service', 2], ['platform_service', 3], ['platform_service', 4], ['platform_service', 5]],
    },
  ]);
  runCases([
    { name: 'other services', source: 'local Players = game:GetService("Players")\nlocal RS = game.ReplicatedStorage', expect: [] },
    { name: 'in a comment', source: '-- uses HttpService later', expect: [] },
  ]);
});

describe('codes', () => {
  test('FINDING_CODES holds every code once, hang risks first', () => {
    assert.equal(new Set(FINDING_CODES).size, 7);
    assert.equal(FINDING_CODES[0], 'loop_without_yield');
    const firstNonHang = FINDING_CODES.findIndex((code) => !isHangRisk(code));
    assert.ok(FINDING_CODES.slice(firstNonHang).every((code) => !isHangRisk(code)));
    assert.equal(isHangRisk('loop_without_yield'), true);
    assert.equal(isHangRisk('deprecated_global'), false);
  });

  test('one finding per code and line', () => {
    assert.deepEqual(scan('wait(1) wait(2) spawn(f)'), [['deprecated_global', 1]]);
  });

  test('a script full of one pattern is capped', () => {
    const source = 'wait()\n'.repeat(1000);
    const findings = scanScript(source);
    assert.equal(findings.length, MAX_FINDINGS_PER_SCRIPT);
    assert.deepEqual(findings.map((f) => f.line), Array.from({ length: MAX_FINDINGS_PER_SCRIPT }, (_, i) => i + 1));
  });
});

describe('tokenizer', () => {
  function kinds(source: string): number[] {
    const t = tokenize(source);
    return Array.from(t.kind.subarray(1, t.count));
  }
  function texts(source: string): string[] {
    const t = tokenize(source);
    const out: string[] = [];
    for (let i = 1; i < t.count; i++) out.push(tokenText(t, i));
    return out;
  }

  test('keywords, names and lines', () => {
    const source = 'local x\nwhile true do\n  continue\nend';
    const t = tokenize(source);
    assert.deepEqual(Array.from(t.kind.subarray(1, t.count)), [KW_LOCAL, NAME, KW_WHILE, KW_TRUE, KW_DO, NAME, KW_END]);
    assert.deepEqual(Array.from(t.line.subarray(1, t.count)), [1, 1, 2, 2, 2, 3, 4]);
  });

  test('numbers of every form are single tokens', () => {
    const source = '0xFF_FF 0b1010 1_000.5 1e-3 2E+10 .5 3.';
    assert.deepEqual(kinds(source), Array(7).fill(NUMBER));
    assert.deepEqual(texts(source), ['0xFF_FF', '0b1010', '1_000.5', '1e-3', '2E+10', '.5', '3.']);
  });

  test('compound and multi-character operators', () => {
    assert.deepEqual(kinds('a += 1 b ..= c d //= 2 e // f'), [
      NAME, COMPOUND_ASSIGN, NUMBER, NAME, COMPOUND_ASSIGN, NAME, NAME, COMPOUND_ASSIGN, NUMBER, NAME, ARITH, NAME,
    ]);
    assert.deepEqual(kinds('(a: number) -> string'), [LPAREN, NAME, COLON, NAME, RPAREN, ARROW, NAME]);
    assert.deepEqual(kinds('x :: any .. y ... ~= =='), [NAME, DOUBLE_COLON, NAME, CONCAT, NAME, ELLIPSIS, COMPARE, COMPARE]);
  });

  test('strings give their contents and the line they start on', () => {
    const source = `a = "x\\"y" b = 'z' c = [==[\nlong ]] ]==] d = "e\\\nf" g`;
    const t = tokenize(source);
    const strings: Array<[string, number]> = [];
    for (let i = 1; i < t.count; i++) {
      if (t.kind[i] === STRING) strings.push([tokenText(t, i), t.line[i]!]);
    }
    assert.deepEqual(strings, [['x\\"y', 1], ['z', 1], ['\nlong ]] ', 1], ['e\\\nf', 2]]);
    assert.equal(t.line[t.count - 1], 3); // `g` after the string continued over a newline
  });

  test('interpolated strings with nested braces and strings', () => {
    const source = 'print(`a {t[{1}]} b {`in {x}`} c`) y';
    assert.deepEqual(kinds(source), [
      NAME, LPAREN, INTERP_BEGIN, NAME, LBRACKET, LBRACE, NUMBER, RBRACE, RBRACKET, INTERP_MID,
      INTERP_BEGIN, NAME, INTERP_END, INTERP_END, RPAREN, NAME,
    ]);
  });

  test('offsets are UTF-8 byte offsets; non-ASCII characters start no token', () => {
    const source = 'é = "ü😀" -- ö\nx';
    const t = tokenize(source);
    assert.deepEqual(Array.from(t.start.subarray(1, t.count)), [3, 6, 20]);
    assert.deepEqual(texts(source), ['=', 'ü😀', 'x']);
    assert.deepEqual(Array.from(t.line.subarray(1, t.count)), [1, 1, 2]);
  });

  test('comments produce no tokens', () => {
    assert.deepEqual(texts('a --[[ x ]] b --[=[\n]] ]=] c -- d\ne --[ not long\nf'), ['a', 'b', 'c', 'e', 'f']);
  });

  test('unterminated forms end where they can', () => {
    assert.deepEqual(texts('x = "abc\ny = 1'), ['x', '=', 'abc', 'y', '=', '1']);
    assert.deepEqual(kinds('x = [[abc\nwhile true do end'), [NAME, ASSIGN, STRING]);
    assert.deepEqual(kinds('--[==[ never closed ]] ]=]'), []);
    assert.deepEqual(kinds('`abc {x'), [INTERP_BEGIN, NAME]);
  });
});

/** A small seeded PRNG (mulberry32), so failures reproduce. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

describe('malformed sources never throw', () => {
  const MB = 1 << 20;
  const sources: Array<[string, string]> = [
    ['unterminated double quote', 'print("abc\nwhile true do end'],
    ['unterminated single quote at the end', "print('abc"],
    ['unterminated long string', 'local s = [==[ while true do end'],
    ['unterminated long comment', '--[[ while true do end'],
    ['unterminated interpolation', 'print(`a {b'],
    ['a lone backslash at the end', 'print("abc\\'],
    ['\\z at the end', 'x = "a\\z'],
    ['stray ends', 'end end end\nwhile true do end\nend end'],
    ['until without repeat', 'until false\nuntil true'],
    ['unclosed blocks', 'function f()\n  if x then\n    while true do'],
    ['a lone long bracket opener', '[=[='],
    ['a lone dash pair', '--'],
    ['closing brackets only', ')))]]]}}}'],
    ['1 MB of (', '('.repeat(MB)],
    ['1 MB of {', '{'.repeat(MB)],
    ['1 MB of [', '['.repeat(MB)],
    ['1 MB of interpolation holes', '`{'.repeat(MB / 2)],
    ['1 MB of }', '}'.repeat(MB)],
    ['deeply nested endless loops', 'while true do\n'.repeat(20_000) + 'end\n'.repeat(20_000)],
    ['deeply nested functions', 'local function f()\n'.repeat(20_000) + 'while true do end\n' + 'end\n'.repeat(20_000)],
    ['nested loops with a yielding helper', 'local function w() wait() end\n' + 'while true do x()\n'.repeat(20_000)],
    ['only keywords', 'do then else elseif for in repeat until function local return break '.repeat(10_000)],
  ];
  for (const [name, source] of sources) {
    test(name, () => {
      assertWellFormed(scanScript(source, SERVER_SCRIPT), source);
    });
  }

  test('a source with more tokens than the scanner keeps is read up to that point', () => {
    const source = 'while true do end\n' + '('.repeat(5_000_000) + '\nwait()';
    assert.equal(tokenize(source).truncated, true);
    assert.deepEqual(scan(source), [['loop_without_yield', 1]]);
  });

  test('unterminated forms still let later code be scanned', () => {
    assert.deepEqual(scan('print("abc\nwhile true do end'), [['loop_without_yield', 2]]);
  });

  test('random binary garbage', () => {
    const random = prng(0x5eed);
    for (let round = 0; round < 300; round++) {
      const length = Math.floor(random() * 4000);
      const codes = new Array<number>(length);
      for (let i = 0; i < length; i++) codes[i] = Math.floor(random() * 0x10000);
      const source = String.fromCharCode(...codes);
      assertWellFormed(scanScript(source, SERVER_SCRIPT), source);
    }
  });

  test('random Luau-like garbage', () => {
    const alphabet = [
      'while', 'true', 'do', 'end', 'repeat', 'until', 'false', 'function', 'local', 'wait', '(', ')', '{', '}', '[', ']',
      '[[', ']]', '[=[', ']=]', '--', '--[[', '"', "'", '`', '\\', '\n', ' ', '=', ':', '.', '..', 'break', 'return',
      'if', 'then', 'for', 'in', 'x', '1', '0x', 'task', 'Wait', 'require', '::', '->', '+=', ',', 'math', 'huge',
    ];
    const random = prng(42);
    for (let round = 0; round < 500; round++) {
      const parts: string[] = [];
      const length = Math.floor(random() * 300);
      for (let i = 0; i < length; i++) parts.push(alphabet[Math.floor(random() * alphabet.length)]!);
      const source = parts.join(random() < 0.5 ? ' ' : '');
      assertWellFormed(scanScript(source, SERVER_SCRIPT), source);
    }
  });
});

describe('scanning bytes', () => {
  const options: ScanOptions = { className: 'Script', runContext: 'Server' };

  test('the bytes of a source give the same findings as its text', () => {
    const alphabet = [
      'while true do', 'end', 'wait()', 'task.wait()', ' ', '\n', '"', "'", '`', '{', '}', '[[', ']]', '--', '--[[',
      'repeat', 'until false', 'local function f()', 'f()', 'local wait = 1', ':connect(', 'game:GetService("HttpService")',
      'game.Players.LocalPlayer', 'require(123)', 'loadstring', '(', ')', 'break', 'é', '😀', '\ud800', '\\', '\r\n', '\0',
    ];
    const random = prng(7);
    let compared = 0;
    for (let round = 0; round < 3000; round++) {
      const parts: string[] = [];
      const length = 1 + Math.floor(random() * 60);
      for (let i = 0; i < length; i++) parts.push(alphabet[Math.floor(random() * alphabet.length)]!);
      const source = parts.join('');
      const fromText = scanScript(source, options);
      assert.deepEqual(scanScriptBytes(Buffer.from(source, 'utf8'), options), fromText, JSON.stringify(source));
      compared += fromText.length;
    }
    assert.ok(compared > 1000, `the sources produced findings to compare (${compared})`);
  });

  test('bytes that are not UTF-8 start no token and keep line numbers', () => {
    const source = Buffer.concat([Buffer.from([0xff, 0xc3, 0x28, 0xe2, 0x82]), Buffer.from('\nwhile true do end\n"\xfe" wait()')]);
    assert.deepEqual(scanScriptBytes(source, options).map((f) => [f.code, f.line]), [['loop_without_yield', 2], ['deprecated_global', 3]]);
  });

  test('blank bytes (whitespace, BOM, no-break space) are an empty source', () => {
    const blank = Buffer.from('\ufeff \t\r\n\u00a0\n', 'utf8');
    assert.deepEqual(scanScriptBytes(blank, options).map((f) => f.code), ['external_code']);
    assert.deepEqual(scanScript(blank.toString('utf8'), options).map((f) => f.code), ['external_code']);
  });

  test('a source cut at the byte limit inside a character ends there, not in the bytes an earlier script left', () => {
    // The earlier script leaves `ait` just where the later one is cut before its 4-byte emoji.
    scanScript(' '.repeat(MAX_SOURCE_BYTES - 3) + 'ait x', options);
    const cut = ' '.repeat(MAX_SOURCE_BYTES - 4) + 'w😀\nwait()';
    assert.deepEqual(scan(cut, options), []);
    assert.equal(tokenize(cut).truncated, true);
  });

  test('when the scanner cannot grow its memory, the scan reports nothing read instead of throwing', () => {
    // A child process whose WebAssembly memories may not pass 16 MB (256 pages); this source needs about 23 MB.
    const script = [
      `import { scanScript } from ${JSON.stringify(new URL('../src/scan/index.js', import.meta.url).href)};`,
      "const big = scanScript('a '.repeat(900000) + 'wait()', { className: 'Script' });",
      "const after = scanScript('wait()', { className: 'Script' });",
      'console.log(JSON.stringify([big.length, after.map((f) => f.code)]));',
    ].join('\n');
    const out = execFileSync(process.execPath, ['--wasm-max-mem-pages=256', '--input-type=module', '-e', script], { encoding: 'utf8' });
    assert.deepEqual(JSON.parse(out), [0, ['deprecated_global']]);
  });

  test('scanning a large source grows the scanner memory, which is then given back', () => {
    // ~900k notable tokens, below the token limit: their walk regions take the
    // module past 64 MB (about 99 MB), which it must not keep.
    const source = '()\n'.repeat(450_000) + 'while true do end';
    assert.deepEqual(scan(source, options), [['loop_without_yield', 450_001]]);
    assert.ok(scannerMemoryBytes() <= 64 << 20, `memory after a large scan: ${scannerMemoryBytes()} bytes`);
  });
});

// --- real places --------------------------------------------------------

interface ScriptSource { className: string; source: string }

/** Script sources in an XML place: `<Item class="…Script">` … `<ProtectedString name="Source">`. */
function xmlSources(path: string): ScriptSource[] {
  const xml = readFileSync(path, 'utf8');
  const pattern = /<Item class="(Script|LocalScript|ModuleScript)"[^>]*>\s*<Properties>[\s\S]*?<ProtectedString name="Source">(?:<!\[CDATA\[([\s\S]*?)\]\]>|([^<]*))<\/ProtectedString>/g;
  return Array.from(xml.matchAll(pattern), (m) => ({
    className: m[1]!,
    // One of the two alternatives matched: CDATA (group 2) or escaped text (group 3).
    source: m[2] ?? m[3]!.replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&quot;/g, '"').replace(/&apos;/g, "'").replace(/&amp;/g, '&'),
  }));
}

/** An LZ4 block (no frame), as Roblox compresses chunks. */
function lz4Block(input: Uint8Array, outputLength: number): Uint8Array {
  const out = new Uint8Array(outputLength);
  let i = 0;
  let o = 0;
  const at = (k: number): number => {
    const byte = input[k];
    if (byte === undefined) throw new Error(`LZ4 block truncated at byte ${k}`);
    return byte;
  };
  const readLength = (base: number): number => {
    let value = base;
    if (base === 15) {
      let byte: number;
      do {
        byte = at(i++);
        value += byte;
      } while (byte === 255);
    }
    return value;
  };
  while (i < input.length) {
    const token = at(i++);
    const literals = readLength(token >> 4);
    out.set(input.subarray(i, i + literals), o);
    i += literals;
    o += literals;
    if (i >= input.length) break;
    const offset = at(i) | (at(i + 1) << 8);
    i += 2;
    const matchLength = readLength(token & 15) + 4;
    if (offset === 0 || offset > o) throw new Error(`LZ4 match offset ${offset} outside the ${o} bytes written`);
    for (let k = 0; k < matchLength; k++, o++) out[o] = out[o - offset]!;
  }
  return out;
}

/**
 * Script sources in a binary place, read just far enough: INST chunks for the
 * class names and the `Source` PROP chunks (type 0x01, consecutive u32-length strings).
 */
function binarySources(path: string): ScriptSource[] {
  const file = readFileSync(path);
  const view = new DataView(file.buffer, file.byteOffset, file.byteLength);
  const classes = new Map<number, { className: string; count: number }>();
  const out: ScriptSource[] = [];
  let p = 32;
  while (p + 16 <= file.length) {
    const name = file.subarray(p, p + 4).toString('latin1').replace(/\0+$/, '');
    const compressed = view.getUint32(p + 4, true);
    const uncompressed = view.getUint32(p + 8, true);
    p += 16;
    let data: Uint8Array = file.subarray(p, p + (compressed || uncompressed));
    p += compressed || uncompressed;
    if (compressed) {
      const isZstd = data[0] === 0x28 && data[1] === 0xb5 && data[2] === 0x2f && data[3] === 0xfd;
      data = isZstd ? zstdDecompress(data) : lz4Block(data, uncompressed);
    }
    const chunk = new DataView(data.buffer, data.byteOffset, data.byteLength);
    const readString = (at: number): [string, number] => {
      const length = chunk.getUint32(at, true);
      return [Buffer.from(data.subarray(at + 4, at + 4 + length)).toString('utf8'), at + 4 + length];
    };
    if (name === 'INST') {
      const [className, next] = readString(4);
      classes.set(chunk.getUint32(0, true), { className, count: chunk.getUint32(next + 1, true) });
    } else if (name === 'PROP') {
      const owner = classes.get(chunk.getUint32(0, true));
      const [property, next] = readString(4);
      if (property === 'Source' && data[next] === 0x01 && owner) {
        let at = next + 1;
        for (let k = 0; k < owner.count; k++) {
          const [source, after] = readString(at);
          out.push({ className: owner.className, source });
          at = after;
        }
      }
    } else if (name === 'END') {
      break;
    }
  }
  return out;
}

describe('real places', () => {
  const places = readdirSync(PLACES_DIR).filter((name) => /\.(rbxl|rbxm|rbxlx)$/.test(name));

  function scanAll(scripts: ScriptSource[]): Map<FindingCode, number> {
    const counts = new Map<FindingCode, number>();
    for (const { className, source } of scripts) {
      const findings = scanScript(source, { className });
      assertWellFormed(findings, source);
      for (const f of findings) counts.set(f.code, (counts.get(f.code) ?? 0) + 1);
    }
    return counts;
  }

  for (const name of places) {
    test(name, () => {
      const path = join(PLACES_DIR, name);
      const scripts = name.endsWith('.rbxlx') ? xmlSources(path) : binarySources(path);
      scanAll(scripts);
    });
  }

  test('the XML place has its scripts read and scanned', () => {
    const scripts = xmlSources(join(PLACES_DIR, 'roblox-dialog-system.rbxlx'));
    assert.equal(scripts.length, 17);
    assert.ok(scripts.every((s) => s.source.length > 0));
    // A modern Roblox sample: nothing old-pattern in it.
    assert.equal(scanAll(scripts).size, 0);
  });

  test('the XML model file scans', () => {
    const scripts = xmlSources(join(TEST_FILES_DIR, 'default-inserted-modulescript.rbxmx'));
    assert.equal(scripts.length, 1);
    scanAll(scripts);
  });

  test('the 2006 place is full of old patterns but its loops all yield', () => {
    const scripts = binarySources(join(PLACES_DIR, 'rocket-arena-2006.rbxl'));
    assert.equal(scripts.length, 15);
    const counts = scanAll(scripts);
    assert.ok((counts.get('deprecated_global') ?? 0) > 0);
    assert.ok((counts.get('legacy_method') ?? 0) > 0);
    assert.ok((counts.get('local_player_on_server') ?? 0) > 0);
    assert.equal(counts.get('loop_without_yield'), undefined);
  });

  test("a package's own `:disconnect` method is not a legacy call (slime-defense)", () => {
    const own = binarySources(join(PLACES_DIR, 'slime-defense.rbxl')).filter((s) => s.source.includes('function mt:disconnect()'));
    assert.ok(own.length >= 2, 'the place holds the dlib System module twice');
    for (const { className, source } of own) {
      const line = source.split('\n').findIndex((text) => text.includes('self:disconnect()')) + 1;
      assert.ok(line > 0);
      const findings = scanScript(source, { className });
      assert.deepEqual(findings.filter((f) => f.line === line && f.code === 'legacy_method'), []);
    }
  });
});

test('the scanner fingerprint is the same for `npm run build` (source maps) and the Docker image\'s build (none), and changes with the scanner', () => {
  const built = new URL('../src/scan/', import.meta.url);
  const files = readdirSync(built).filter((name) => name.endsWith('.js') || name.endsWith('.wasm'));
  assert.ok(files.includes('scanner.wasm'));
  const dir = mkdtempSync(join(tmpdir(), 'rbxl-scanner-'));
  try {
    const image = pathToFileURL(`${dir}/`);
    for (const name of files) {
      const text = readFileSync(new URL(name, built));
      // What tsc writes without source maps: the same file, without its closing comment.
      writeFileSync(new URL(name, image), name.endsWith('.js') ? text.toString('utf8').replace(/\n\/\/# sourceMappingURL=[^\n]*\n?$/, '\n') : text);
    }
    assert.equal(scannerFingerprint(built), SCANNER_VERSION);
    assert.equal(scannerFingerprint(image), SCANNER_VERSION);
    const wasm = readFileSync(new URL('scanner.wasm', image));
    wasm[wasm.length - 1] = (wasm[wasm.length - 1] ?? 0) ^ 1;
    writeFileSync(new URL('scanner.wasm', image), wasm);
    assert.notEqual(scannerFingerprint(image), SCANNER_VERSION);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
