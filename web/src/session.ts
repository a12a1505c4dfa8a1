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
