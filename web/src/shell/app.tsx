// The shell: navigation by role, the page for the route, and the login dialog that an expired session
// opens over the page (the page stays mounted, so its input survives the new login).
import type { ComponentType } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { api, call } from '../api/client.ts';
import { session } from '../api/session.ts';
import { AdminAccounts } from '../pages/admin-accounts.tsx';
import { AdminAudit } from '../pages/admin-audit.tsx';
import { AdminBans } from '../pages/admin-bans.tsx';
import { AdminBlocklist } from '../pages/admin-blocklist.tsx';
import { AdminCoupons } from '../pages/admin-coupons.tsx';
import { AdminFiles } from '../pages/admin-files.tsx';
import { AdminModeration } from '../pages/admin-moderation.tsx';
import { AdminOrders } from '../pages/admin-orders.tsx';
import { AdminPayment } from '../pages/admin-payment.tsx';
import { AdminPlans } from '../pages/admin-plans.tsx';
import { AdminSite } from '../pages/admin-site.tsx';
import { AlbumsPage } from '../pages/albums.tsx';
import { DeleteFilePage } from '../pages/delete-file.tsx';
import { FilesPage } from '../pages/files.tsx';
import { GalleryPage } from '../pages/gallery.tsx';
import { HotlinkPage } from '../pages/hotlink.tsx';
import { OAuthPage } from '../pages/login/oauth.tsx';
import { LoginForm, LoginPage, RegisterPage, ResetPage } from '../pages/login.tsx';
import { PlansPage } from '../pages/plans.tsx';
import { ReportPage } from '../pages/report.tsx';
import { SecurityPage } from '../pages/security.tsx';
import { SharesPage } from '../pages/shares.tsx';
import { PrivacyPage, TermsPage } from '../pages/site-text.tsx';
import { TokensPage } from '../pages/tokens.tsx';
import { WebhooksPage } from '../pages/webhooks.tsx';
import { navigate, pagePath, routeParam, useRoute } from '../router.ts';
import { useSite } from '../site.ts';

interface RouteDef {
  path: string;
  label: string;
  page: ComponentType;
  access: 'public' | 'user' | 'admin' | 'any';
}

const ROUTES: RouteDef[] = [
  { path: '/files', label: 'My files', page: FilesPage, access: 'any' },
  { path: '/albums', label: 'Albums', page: AlbumsPage, access: 'any' },
  { path: '/shares', label: 'Share links', page: SharesPage, access: 'any' },
  { path: '/gallery', label: 'Gallery', page: GalleryPage, access: 'public' },
  { path: '/tokens', label: 'API tokens', page: TokensPage, access: 'any' },
  { path: '/webhooks', label: 'Webhooks', page: WebhooksPage, access: 'any' },
  { path: '/embedding', label: 'Embedding', page: HotlinkPage, access: 'any' },
  { path: '/plans', label: 'Plans & usage', page: PlansPage, access: 'user' },
  { path: '/security', label: 'Security', page: SecurityPage, access: 'any' },
  { path: '/admin/accounts', label: 'Accounts', page: AdminAccounts, access: 'admin' },
  { path: '/admin/plans', label: 'Plans', page: AdminPlans, access: 'admin' },
  { path: '/admin/orders', label: 'Orders', page: AdminOrders, access: 'admin' },
  { path: '/admin/coupons', label: 'Coupons', page: AdminCoupons, access: 'admin' },
  { path: '/admin/payment', label: 'Payment settings', page: AdminPayment, access: 'admin' },
  { path: '/admin/files', label: 'Moderation', page: AdminFiles, access: 'admin' },
  { path: '/admin/moderation', label: 'Review queue', page: AdminModeration, access: 'admin' },
  { path: '/admin/blocklist', label: 'Block list', page: AdminBlocklist, access: 'admin' },
  { path: '/admin/bans', label: 'Bans', page: AdminBans, access: 'admin' },
  { path: '/admin/audit', label: 'Audit log', page: AdminAudit, access: 'admin' },
  { path: '/admin/site', label: 'Site', page: AdminSite, access: 'admin' },
];

function useSession() {
  const [, setVersion] = useState(0);
  useEffect(() => session.subscribe(() => setVersion((version) => version + 1)), []);
  return session;
}

function allowed(route: RouteDef): boolean {
  if (route.access === 'public') return true;
  if (!session.user()) return false;
  if (route.access === 'admin') return session.isAdmin();
  if (route.access === 'user') return !session.isAdmin();
  return true;
}

export function App() {
  useSession();
  const path = useRoute();
  const user = session.user();
  const expired = session.expired();
  const site = useSite();

  // An administrator the API serves nothing but second-factor setup (docs/ACCOUNTS.md): to the security page.
  const needsSecondFactor = session.needsSecondFactor();
  useEffect(() => {
    if (needsSecondFactor && pagePath(path) !== '/security') navigate('/security');
  }, [path, needsSecondFactor]);

  useEffect(() => {
    if (
      path === '/' ||
      (!user &&
        !['/login', '/register', '/gallery', '/reset', '/report', '/oauth', '/terms', '/privacy'].includes(
          pagePath(path),
        ))
    ) {
      navigate(user ? (session.isAdmin() ? '/admin/accounts' : '/files') : '/login');
    }
  }, [path, user]);

  let content = null;
  if (path === '/login') content = <LoginPage />;
  else if (path === '/register') content = <RegisterPage />;
  // A reset link opens `#/reset?token=…` (docs/ACCOUNTS.md "Password reset"), logged in or not.
  else if (pagePath(path) === '/reset') content = <ResetPage key={path} token={routeParam(path, 'token')} />;
  // Back from a sign-in provider (docs/ACCOUNTS.md "Sign in with another provider"), logged in or not.
  else if (pagePath(path) === '/oauth')
    content = (
      <OAuthPage
        key={path}
        ticket={routeParam(path, 'ticket')}
        error={routeParam(path, 'error')}
        linked={routeParam(path, 'linked')}
      />
    );
  // A Report link (the gallery's lightbox, a share page) opens `#/report?url=…`, logged in or not.
  else if (pagePath(path) === '/report') content = <ReportPage key={path} url={routeParam(path, 'url')} />;
  else if (path === '/terms') content = <TermsPage />;
  else if (path === '/privacy') content = <PrivacyPage />;
  // An uploader config's deletion URL (ShareX's DeletionURL): one file, deleted after a confirmation.
  else if (user && /^\/files\/[^/?]+\/delete$/.test(path))
    content = <DeleteFilePage key={path} id={decodeURIComponent(path.split('/')[2] ?? '')} />;
  else {
    // A page may take a query (`#/albums?id=…`).
    const route = ROUTES.find((candidate) => candidate.path === pagePath(path));
    if (route && allowed(route)) content = <route.page />;
    else if (user) content = <p>This page does not exist or is not yours to see.</p>;
  }

  // Below the breakpoint the links fold into a menu (style.css .menu); a route change or Escape folds it.
  const [menuOpen, setMenuOpen] = useState(false);
  useEffect(() => setMenuOpen(false), [path]);
  useEffect(() => {
    if (!menuOpen) return;
    const onKey = (event: KeyboardEvent) => {
      if (event.key !== 'Escape') return;
      setMenuOpen(false);
      document.getElementById('menu-toggle')?.focus();
    };
    addEventListener('keydown', onKey);
    return () => removeEventListener('keydown', onKey);
  }, [menuOpen]);

  const logout = async () => {
    await call(api.POST('/auth/logout', { body: {} })).catch(() => undefined);
    session.end();
    navigate('/login');
  };

  return (
    <>
      {/* A button, not a #main link: the hash is the route. */}
      <button type="button" class="skip" onClick={() => document.getElementById('main')?.focus()}>
        Skip to content
      </button>
      <header class={menuOpen ? 'top open' : 'top'} inert={expired}>
        <a class="brand" href={user ? '#/' : '#/login'}>
          {site?.logo_url && <img src={site.logo_url} alt="" />}
          {site?.name ?? 'Console'}
        </a>
        <button
          type="button"
          id="menu-toggle"
          class="menu-toggle secondary"
          aria-expanded={menuOpen}
          aria-controls="menu"
          onClick={() => setMenuOpen(!menuOpen)}
        >
          Menu
        </button>
        <div id="menu" class="menu">
          <nav aria-label="Main">
            <ul>
              {ROUTES.filter(allowed).map((route) => (
                <li key={route.path}>
                  <a
                    href={`#${route.path}`}
                    aria-current={route.path === pagePath(path) ? 'page' : undefined}
                  >
                    {route.label}
                  </a>
                </li>
              ))}
              {!user && (
                <li>
                  <a href="#/login" aria-current={path === '/login' ? 'page' : undefined}>
                    Log in
                  </a>
                </li>
              )}
            </ul>
          </nav>
          {user && !expired && (
            <div class="who">
              <span>
                {user.username}
                {user.role === 'admin' ? ' (administrator)' : ''}
              </span>
              <button type="button" class="link" onClick={logout}>
                Log out
              </button>
            </div>
          )}
        </div>
      </header>
      <main id="main" tabIndex={-1} inert={expired}>
        {content}
      </main>
      <SiteFooter />
      {expired && user && <ExpiredDialog username={user.username} role={user.role} />}
    </>
  );
}

/** The site's footer (stored sanitized: text and links only) and its terms and privacy links. */
function SiteFooter() {
  const site = useSite();
  if (!site) return null;
  return (
    <footer class="site-footer">
      {site.footer_html && <div dangerouslySetInnerHTML={{ __html: site.footer_html }} />}
      {site.terms && <a href="#/terms">Terms of service</a>}
      {site.privacy && <a href="#/privacy">Privacy policy</a>}
    </footer>
  );
}

function ExpiredDialog({ username, role }: { username: string; role: 'user' | 'admin' }) {
  return (
    <div class="backdrop">
      <div class="dialog" role="dialog" aria-modal="true" aria-labelledby="expired-title">
        <h2 id="expired-title">Your session has ended</h2>
        <p>Log in again to continue; what you typed on the page is kept.</p>
        <LoginForm initialUsername={username} door={role} onDone={() => undefined} autoFocus />
        <button type="button" class="link" onClick={() => session.end()}>
          Log in as someone else
        </button>
      </div>
    </div>
  );
}
