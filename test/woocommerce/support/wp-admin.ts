/** A logged-in WordPress admin over plain HTTP, with its own cookie jar: what a shop owner's browser sends. */
export interface AdminSession {
  get(path: string): Promise<string>;
  /** Submits WooCommerce → Settings → Payments → ServicePay; returns the notices the page shows. */
  saveGatewaySettings(fields: Record<string, string | boolean>): Promise<PageNotices>;
}

/**
 * What a settings page says: WooCommerce's own messages ("Your settings have been saved.") and the plugin's
 * notices, by kind.
 */
export interface PageNotices {
  messages: string[];
  warnings: string[];
  errors: string[];
}

const settingsPath = '/wp-admin/admin.php?page=wc-settings&tab=checkout&section=servicepay';

const text = (markup: string) =>
  markup
    .replace(/<[^>]+>/g, '')
    .replace(/&#0?39;|&#x27;/g, "'")
    .replace(/&quot;/g, '"')
    .replace(/&amp;/g, '&')
    .trim();

/** WooCommerce's own notices of one kind (`WC_Admin_Settings::show_messages`). */
const wooNotices = (html: string, kind: 'updated' | 'error'): string[] =>
  [
    ...html.matchAll(
      new RegExp(`<div id="message" class="${kind} inline"><p><strong>([\\s\\S]*?)</strong>`, 'g'),
    ),
  ].map((match) => text(match[1] ?? ''));

/** The plugin's own notices of one kind (`Admin\\SettingsNotices`). */
const pluginNotices = (html: string, kind: 'error' | 'warning' | 'success'): string[] =>
  [
    ...html.matchAll(
      new RegExp(`<div class="notice notice-${kind} inline servicepay-notice"[^>]*><p>([\\s\\S]*?)</p>`, 'g'),
    ),
  ].map((match) => text(match[1] ?? ''));

/** Every notice a settings page shows. */
export const pageNotices = (html: string): PageNotices => ({
  messages: [...wooNotices(html, 'updated'), ...pluginNotices(html, 'success')],
  warnings: pluginNotices(html, 'warning'),
  errors: [...wooNotices(html, 'error'), ...pluginNotices(html, 'error')],
});

export async function loginAsAdmin(siteUrl: string): Promise<AdminSession> {
  const cookies = new Map<string, string>();
  const request = async (path: string, init: RequestInit = {}): Promise<Response> => {
    const response = await fetch(new URL(path, siteUrl), {
      ...init,
      redirect: 'manual',
      headers: {
        ...(init.headers as Record<string, string>),
        cookie: [...cookies].map(([k, v]) => `${k}=${v}`).join('; '),
      },
    });
    for (const line of response.headers.getSetCookie()) {
      const [pair] = line.split(';');
      const [name, ...value] = (pair ?? '').split('=');
      if (name) cookies.set(name.trim(), value.join('='));
    }
    return response;
  };
  await request('/wp-login.php').then((r) => r.text());
  const login = await request('/wp-login.php', {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      log: 'admin',
      pwd: 'password',
      'wp-submit': 'Log In',
      testcookie: '1',
    }).toString(),
  });
  await login.text();
  if (login.status !== 302) throw new Error(`admin login: HTTP ${login.status}`);
  const get = async (path: string) => (await request(path)).text();
  return {
    get,
    async saveGatewaySettings(fields) {
      const page = await get(settingsPath);
      const nonce = /name="_wpnonce" value="([0-9a-f]+)"/.exec(page)?.[1];
      if (!nonce) throw new Error('no settings nonce on the ServicePay settings page');
      const form = new URLSearchParams({ _wpnonce: nonce, save: 'Save changes' });
      for (const [name, value] of Object.entries(fields)) {
        // A ticked checkbox sends "1"; an unticked one sends nothing.
        if (value === true) form.set(`woocommerce_servicepay_${name}`, '1');
        else if (value !== false) form.set(`woocommerce_servicepay_${name}`, value);
      }
      const response = await request(settingsPath, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: form.toString(),
      });
      return pageNotices(await response.text());
    },
  };
}
