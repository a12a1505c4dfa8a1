// sharp and libvips, loaded on first use (they are installed beside the bundles that use them,
// infra/bundling.ts): the renderer, the block list's perceptual hash and the moderation classifier's input.
// Each reads an image once and keeps what it writes, so libvips' operation cache would only hold memory
// between invocations that never reuse it. The thread count stays sharp's default: one libvips thread on
// glibc (Lambda's), where more threads fragment glibc's allocator; the image functions are sized for that
// one core (1,769 MB, one full vCPU: docs/CAPACITY.md).
import type SharpModule from 'sharp';

let loading: Promise<typeof SharpModule> | undefined;

/** sharp, loaded once per process; a failed load is tried again on the next call. */
export function loadSharp(): Promise<typeof SharpModule> {
  loading ??= import('sharp').then(
    ({ default: sharp }) => {
      sharp.cache(false);
      return sharp;
    },
    (error: unknown) => {
      loading = undefined;
      throw error;
    },
  );
  return loading;
}
