// A value kept per container for a stated time (its staleness), so a hot path need not read the table on
// every request. One load at a time (callers arriving during a load share it); a failed load is not kept.
// Only for what may lag by `ttlMs` in other containers: the container that writes the value calls
// `set` or `invalidate`, so its own change is visible to it at once.

export interface CacheOptions {
  /** How long a loaded value is served without asking again: the staleness other containers may see. */
  ttlMs: number;
  clock?: () => Date;
}

export interface Cached<T> {
  /** The value, loaded when there is none or it is older than `ttlMs`. */
  get(): Promise<T>;
  /** Loads now whatever the value's age (the loader still gets the held value to revalidate). */
  refresh(): Promise<T>;
  /** The next `get` loads again (this container changed what the value reflects). */
  invalidate(): void;
  /** This container knows the value already (it has just written it): kept as fresh. */
  set(value: T): void;
}

/**
 * `loader` gets the value it is replacing, if any, so it may revalidate it cheaply (a version read) and
 * answer the same value instead of loading it whole.
 */
export function cached<T>(loader: (previous: T | undefined) => Promise<T>, options: CacheOptions): Cached<T> {
  const clock = options.clock ?? (() => new Date());
  let value: { value: T; at: number } | undefined;
  let loading: Promise<T> | undefined;
  // Bumped by set/invalidate: a load that began before them must not overwrite what they decided.
  let generation = 0;

  const load = () => {
    const started = generation;
    const previous = value?.value;
    const attempt = loader(previous).then(
      (loaded) => {
        if (generation === started) value = { value: loaded, at: clock().getTime() };
        if (loading === attempt) loading = undefined;
        return loaded;
      },
      (error: unknown) => {
        if (loading === attempt) loading = undefined;
        throw error;
      },
    );
    loading = attempt;
    return attempt;
  };

  return {
    get() {
      if (value && clock().getTime() - value.at < options.ttlMs) return Promise.resolve(value.value);
      return loading ?? load();
    },
    refresh() {
      return loading ?? load();
    },
    invalidate() {
      generation += 1;
      value = undefined;
      loading = undefined;
    },
    set(fresh) {
      generation += 1;
      value = { value: fresh, at: clock().getTime() };
      loading = undefined;
    },
  };
}
