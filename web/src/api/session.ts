// Who is logged in. The session token lives in localStorage so a reload keeps it; an expired session keeps
// the account (and every open page's input) and only asks for the password again.
export interface SessionUser {
  id: string;
  username: string;
  email: string | null;
  role: 'user' | 'admin';
  totp_enabled: boolean;
}

interface SessionState {
  token: string | null;
  user: SessionUser | null;
  expired: boolean;
  /** The API refused this administrator everything but setting up a second factor (docs/ACCOUNTS.md). */
  needsSecondFactor?: boolean;
}

const STORAGE_KEY = 'console.session';

function load(): SessionState {
  try {
    const stored = JSON.parse(localStorage.getItem(STORAGE_KEY) ?? 'null') as SessionState | null;
    if (stored?.token && stored.user) return { ...stored, expired: false };
  } catch {
    // A damaged entry is no session.
  }
  return { token: null, user: null, expired: false };
}

let state = load();
const listeners = new Set<() => void>();

function set(next: SessionState): void {
  state = next;
  if (next.token && next.user) localStorage.setItem(STORAGE_KEY, JSON.stringify(next));
  else localStorage.removeItem(STORAGE_KEY);
  for (const listener of listeners) listener();
}

export const session = {
  token: () => (state.expired ? null : state.token),
  user: () => state.user,
  expired: () => state.expired,
  isAdmin: () => state.user?.role === 'admin',
  start(token: string, user: SessionUser): void {
    set({ token, user, expired: false });
  },
  needsSecondFactor: () => state.needsSecondFactor === true,
  /** Set when the API says so; cleared once a second factor is set up (or by the next login). */
  setNeedsSecondFactor(needs: boolean): void {
    if ((state.needsSecondFactor === true) !== needs) set({ ...state, needsSecondFactor: needs });
  },
  expire(): void {
    if (!state.expired) set({ ...state, token: null, expired: true });
  },
  end(): void {
    set({ token: null, user: null, expired: false });
  },
  subscribe(listener: () => void): () => void {
    listeners.add(listener);
    return () => listeners.delete(listener);
  },
};

// Device tokens (docs/ACCOUNTS.md "Device tokens"): what each login on this browser answered, kept past
// logout and session expiry, so that this browser's next login of that account is not held by the
// account's guessing guard. One per account, found by the username or e-mail typed at login, with the
// account's role, so the login form knows which door the account signs in at (docs/ACCOUNTS.md "Doors").
interface DeviceEntry {
  username: string;
  email: string | null;
  token: string;
  role?: SessionUser['role'];
}

const DEVICES_KEY = 'console.devices';

function loadDevices(): DeviceEntry[] {
  try {
    const stored = JSON.parse(localStorage.getItem(DEVICES_KEY) ?? '[]') as DeviceEntry[];
    return Array.isArray(stored) ? stored.filter((entry) => typeof entry?.token === 'string') : [];
  } catch {
    // A damaged entry is no token: the login goes on without one.
    return [];
  }
}

function entryFor(identifier: string): DeviceEntry | undefined {
  const wanted = identifier.trim().toLowerCase();
  if (!wanted) return undefined;
  return loadDevices().find(
    (entry) => entry.username.toLowerCase() === wanted || entry.email?.toLowerCase() === wanted,
  );
}

export const devices = {
  /** The token kept for the account named by `identifier` (its username or e-mail, any case). */
  tokenFor(identifier: string): string | undefined {
    return entryFor(identifier)?.token;
  },
  /** The role this browser saw the account log in with, if it ever did (which door to knock at). */
  roleOf(identifier: string): SessionUser['role'] | undefined {
    return entryFor(identifier)?.role;
  },
  /** Keeps the token a login answered, replacing the account's earlier one. */
  keep(token: string, user: SessionUser): void {
    const others = loadDevices().filter(
      (entry) => entry.username.toLowerCase() !== user.username.toLowerCase(),
    );
    localStorage.setItem(
      DEVICES_KEY,
      JSON.stringify([...others, { username: user.username, email: user.email, token, role: user.role }]),
    );
  },
};
