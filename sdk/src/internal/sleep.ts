/** Waits `ms` milliseconds. Its own module so tests can replace the waiting between retries. */
export const sleep = (ms: number): Promise<void> =>
  new Promise((resolve) => {
    setTimeout(resolve, ms);
  });
