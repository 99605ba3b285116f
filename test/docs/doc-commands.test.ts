import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT, type RunningProcess, startProcess } from '../support/child-process.ts';

// Every ```sh block of the guides in docs/, run in order in one bash per guide (so a variable set in one block
// is there in the next), from the repository folder, against a real `npm start`. A line `# prints: TEXT`
// asserts that its block printed TEXT. The guides are written for the default ports and the `data/` folder;
// the test runs `npm start` on free ports and a temporary folder and rewrites those, and nothing else.

const run = promisify(execFile);

/** Guides in the order a new user reads them (going-live last: it approves KYC). */
const GUIDES = [
  'quick-start.md',
  'webhooks.md',
  'without-a-website.md',
  'troubleshooting.md',
  'going-live.md',
];

/** Commands the test starts itself (they run until Ctrl-C), with the same settings on free ports. */
const STARTED_BY_THE_TEST = ['npm start'];

/**
 * Commands that set up a machine; running them here would replace the tree under test. `.ci/run` runs both on a
 * fresh clone.
 */
const SETUP = ['git clone <the ServicePay repository URL> servicepay && cd servicepay', 'npm ci'];

/** Shell keywords and builtins, and the POSIX tools every Linux and macOS has: not listed as needs. */
const EVERY_SHELL_HAS = new Set(
  'cd export echo printf test for done if fi while set cut sleep date sed grep cat head tail tr wc'.split(
    ' ',
  ),
);
/** How the quick start names what a program comes with. */
const NAMED_AS: Record<string, string> = { npm: 'Node', npx: 'Node', node: 'Node' };

interface Block {
  guide: string;
  code: string;
  expects: string[];
}

function blocksOf(guide: string): Block[] {
  const text = readFileSync(join(ROOT, 'docs', guide), 'utf8');
  return [...text.matchAll(/^```sh\n([\s\S]*?)^```$/gm)].map((match) => {
    const code = match[1] as string;
    const expects = [...code.matchAll(/^# prints: (.+)$/gm)].map((m) => m[1] as string);
    return { guide, code, expects };
  });
}

const folder = mkdtempSync(join(tmpdir(), 'servicepay-docs-'));
let service: RunningProcess;
let rewrites: Array<[string, string]>;

beforeAll(async () => {
  service = startProcess(process.execPath, ['--import', 'tsx', 'scripts/start.ts', '--no-build'], {
    env: {
      SERVICEPAY_DB: join(folder, 'servicepay.db'),
      SERVICEPAY_PORT: '0',
      SERVICEPAY_TEST_WIDGET_PORT: '0',
      SERVICEPAY_LIVE_WIDGET_PORT: '0',
      SHOP_PORT: '0',
    },
  });
  await service.waitFor(/Press Ctrl\+C to stop/);
  const printed = service.output();
  const origin = (label: string) => {
    const url = new RegExp(`${label}\\s+(http://[^/\\s]+)`).exec(printed)?.[1];
    if (!url) throw new Error(`npm start printed no ${label}:\n${printed}`);
    return url;
  };
  rewrites = [
    ['http://127.0.0.1:4242', origin('API')],
    ['http://127.0.0.1:4243', origin('Test widget host')],
    ['http://127.0.0.1:4244', origin('Live widget host')],
    ['http://127.0.0.1:3000', origin('Example shop')],
    ['data/', `${folder}/`],
  ];
});

afterAll(async () => {
  await service?.stop();
  rmSync(folder, { recursive: true, force: true });
});

describe('the commands in docs/', () => {
  it('has the guides, each with commands', () => {
    for (const guide of GUIDES) expect(blocksOf(guide).length, guide).toBeGreaterThan(0);
  });

  it.each(GUIDES)('%s: every command runs and prints what the guide says', async (guide) => {
    const script: string[] = ['set -euo pipefail'];
    const blocks = blocksOf(guide);
    for (const [index, block] of blocks.entries()) {
      const code = block.code.trim();
      if (STARTED_BY_THE_TEST.includes(code)) continue;
      if (code.split('\n').every((line) => SETUP.includes(line))) continue;
      let rewritten = code;
      for (const [from, to] of rewrites) rewritten = rewritten.split(from).join(to);
      script.push(`echo '<<<block ${index}>>>'`, rewritten);
    }
    script.push(`echo '<<<end>>>'`);
    let output: string;
    try {
      ({ stdout: output } = await run('bash', ['-c', script.join('\n')], {
        cwd: ROOT,
        timeout: 90_000,
        maxBuffer: 16 * 1024 * 1024,
        env: { PATH: process.env.PATH, HOME: process.env.HOME, LANG: 'C.UTF-8' },
      }));
    } catch (error) {
      const { stdout, stderr } = error as { stdout?: string; stderr?: string };
      throw new Error(`a command in ${guide} failed:\n${stdout}\n${stderr}`);
    }
    expect(output).toContain('<<<end>>>');
    for (const [index, block] of blocks.entries()) {
      if (block.expects.length === 0) continue;
      const start = output.indexOf(`<<<block ${index}>>>`);
      const next = output.indexOf('<<<', start + 3);
      const printed = output.slice(start, next);
      for (const expected of block.expects) {
        expect(printed, `${guide}, block ${index + 1}:\n${block.code}`).toContain(expected);
      }
    }
  });

  it('names in the quick start every program the guides run that a fresh machine may lack', () => {
    const programs = new Set<string>();
    for (const block of GUIDES.flatMap(blocksOf)) {
      // Continuation lines joined, comments and single-quoted text (JSON, jq filters) left out; what runs is the
      // first word of each line, pipeline stage, `&&`/`;` list member, loop body and $(…) substitution.
      const code = block.code
        .replace(/\\\n/g, ' ')
        .replace(/^\s*#.*$/gm, '')
        .replace(/'[^']*'/g, "''");
      for (const part of code.split(/\$\(|\||&&|;|\n|\bdo\b|\bthen\b/)) {
        const command =
          part
            .trim()
            .replace(/^([A-Za-z_]\w*=\S*\s*)+/, '')
            .split(/\s+/)[0] ?? '';
        if (/^[a-z][\w.-]*$/.test(command)) programs.add(command);
      }
    }
    expect([...programs]).toEqual(expect.arrayContaining(['git', 'npm', 'curl', 'jq', 'openssl']));
    const needs = /^You need [\s\S]*?\n\n/m.exec(
      readFileSync(join(ROOT, 'docs', 'quick-start.md'), 'utf8'),
    )?.[0];
    expect(needs).toBeDefined();
    for (const program of programs) {
      if (EVERY_SHELL_HAS.has(program)) continue;
      const named = NAMED_AS[program] ?? program;
      expect(needs, `${program}: ${named} is not in the quick start's "You need"`).toMatch(
        new RegExp(`\\b${named}\\b`),
      );
    }
  });

  it('starts or sets up only what the test knows how to stand in for, here and in the README', () => {
    const all = GUIDES.flatMap(blocksOf).map((block) => block.code.trim());
    expect(all).toContain('npm start');
    for (const code of all) {
      const lines = code.split('\n');
      if (lines.some((line) => SETUP.includes(line)))
        expect(lines.every((line) => SETUP.includes(line))).toBe(true);
    }
    // The README's "Try it" is the same two steps; what follows them is in the quick start, run above.
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
    const tryIt = readme.slice(readme.indexOf('## Try it'), readme.indexOf('## What is here'));
    const commands = [...tryIt.matchAll(/^```sh\n([\s\S]*?)^```$/gm)].flatMap((m) =>
      (m[1] as string).trim().split('\n'),
    );
    expect(commands).toEqual(['npm ci', 'npm start']);
  });
});
