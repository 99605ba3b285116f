import { execFileSync } from 'node:child_process';
import {
  chownSync,
  closeSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  rmSync,
  statfsSync,
  unlinkSync,
  writeSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * A real filesystem of its own, small enough to fill: a `tmpfs` mounted on a fresh temporary folder. What is
 * written there meets the kernel's own `ENOSPC` once `fill()` has taken every free block, and gets space again
 * after `free()`, with no restart of whatever keeps files there (SQLite, PostgreSQL, a log).
 */
export interface SmallDisk {
  /** The mount point. */
  path: string;
  /** Writes a filler file until the filesystem answers ENOSPC: every block is taken. */
  fill(): void;
  /** Removes the filler: the space comes back. */
  free(): void;
  /** Bytes a non-root writer could still write (tmpfs keeps no reserve, so what root could write too). */
  available(): number;
  /** Unmounts and removes the folder (whatever is still in it goes). Safe to call twice. */
  remove(): void;
}

/**
 * Why no filesystem can be mounted here (mounting needs root, or CAP_SYS_ADMIN), or undefined when it can:
 * found by mounting and unmounting one tiny tmpfs.
 */
export const smallDiskMissingReason: string | undefined = (() => {
  if (process.platform !== 'linux') return `tmpfs mounts need Linux, not ${process.platform}`;
  if (process.getuid?.() !== 0) return 'mounting a tmpfs needs root';
  const probe = mkdtempSync(join(tmpdir(), 'servicepay-disk-probe-'));
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=64k', 'tmpfs', probe], { stdio: 'pipe' });
    execFileSync('umount', [probe], { stdio: 'pipe' });
    return undefined;
  } catch (error) {
    return `mount -t tmpfs failed: ${String((error as { stderr?: unknown }).stderr ?? error).trim()}`;
  } finally {
    rmSync(probe, { recursive: true, force: true });
  }
})();

/** True when `mountSmallDisk` works on this machine. */
export const smallDiskAvailable = smallDiskMissingReason === undefined;

/** Every disk mounted by this process and not yet removed: unmounted at exit if a test forgot. */
const mounted = new Set<string>();
process.once('exit', () => {
  for (const path of mounted) {
    try {
      execFileSync('umount', ['-l', path], { stdio: 'ignore' });
      rmSync(path, { recursive: true, force: true });
    } catch {
      // Already gone.
    }
  }
});

/**
 * Mounts a tmpfs of `sizeMiB` on a fresh temporary folder. `owner` hands the mount point to another user (the
 * `postgres` user that keeps a tablespace there).
 *
 * @example
 * const disk = mountSmallDisk(32);
 * const server = await startServer({}, { dbPath: join(disk.path, 'servicepay.db') });
 * disk.fill(); // every write of the server now meets ENOSPC
 * disk.free();
 * await server.close();
 * disk.remove();
 */
export function mountSmallDisk(sizeMiB: number, owner?: { uid: number; gid: number }): SmallDisk {
  if (!smallDiskAvailable) throw new Error(`cannot mount a small disk: ${smallDiskMissingReason}`);
  const path = mkdtempSync(join(tmpdir(), 'servicepay-disk-'));
  execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${sizeMiB}m,mode=0755`, 'tmpfs', path], {
    stdio: 'pipe',
  });
  mounted.add(path);
  if (owner) chownSync(path, owner.uid, owner.gid);
  const filler = join(path, 'filler');
  return {
    path,
    fill() {
      const fd = openSync(filler, 'a');
      try {
        // Large writes first, then ever smaller ones, so the last few free bytes are taken too.
        for (const size of [1 << 20, 64 << 10, 4 << 10, 512, 1]) {
          const chunk = Buffer.alloc(size, 0x2e);
          try {
            for (;;) writeSync(fd, chunk);
          } catch (error) {
            if ((error as NodeJS.ErrnoException).code !== 'ENOSPC') throw error;
          }
        }
      } finally {
        closeSync(fd);
      }
    },
    free() {
      try {
        unlinkSync(filler);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
      }
    },
    available() {
      const stats = statfsSync(path);
      return stats.bavail * stats.bsize;
    },
    remove() {
      if (!mounted.delete(path)) return;
      try {
        execFileSync('umount', [path], { stdio: 'pipe' });
      } catch {
        // Still in use (a process a failed test left running holds a file there): detached now, freed when the
        // last file on it closes.
        execFileSync('umount', ['-l', path], { stdio: 'pipe' });
      }
      rmSync(path, { recursive: true, force: true });
    },
  };
}

/** A folder on `disk` owned by `owner` (PostgreSQL wants its tablespace folder to be its own, and empty). */
export function ownedFolder(disk: SmallDisk, name: string, owner?: { uid: number; gid: number }): string {
  const folder = join(disk.path, name);
  mkdirSync(folder);
  if (owner) chownSync(folder, owner.uid, owner.gid);
  return folder;
}
