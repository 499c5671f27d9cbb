import { ConfigError } from "@platform/service-kit/config";
import { redactConfiguration } from "@platform/service-kit/logger";
import { describe, expect, it } from "vitest";
import { defaultWhatsAppTemplates, loadNotifyConfig as loadWithKey } from "./config.js";

const SECRETS_KEY = Buffer.alloc(32, 7).toString("base64");
const loadNotifyConfig = (environment: Record<string, string>) => loadWithKey({ SECRETS_KEY, ...environment });

describe("notify configuration", () => {
  it("defaults to the sandbox channel, with the documented WhatsApp templates and timeouts", () => {
    const config = loadNotifyConfig({});
    expect(config.NOTIFY_CHANNEL_PROVIDER).toBe("sandbox");
    expect(config.WHATSAPP_TEMPLATES).toEqual(defaultWhatsAppTemplates);
    expect(config.WHATSAPP_TIMEOUT).toBe(3_000);
    expect(config.NOTIFICATION_LEASE).toBe(30_000);
    expect(config.PROJECTIONS_ACK_WAIT).toBe(30_000);
  });

  it("needs SECRETS_KEY (it seals the tenants' access tokens), naming it", () => {
    expect(() => loadWithKey({})).toThrow(/SECRETS_KEY/);
    expect(() => loadWithKey({ SECRETS_KEY: "short" })).toThrow(/SECRETS_KEY: the key must be exactly 32 bytes/);
  });

  it("takes the process-wide number as an optional fallback, but both settings or neither", () => {
    expect(loadNotifyConfig({ NOTIFY_CHANNEL_PROVIDER: "whatsapp" }).WHATSAPP_PHONE_NUMBER_ID).toBeUndefined();
    expect(() => loadNotifyConfig({ NOTIFY_CHANNEL_PROVIDER: "whatsapp", WHATSAPP_ACCESS_TOKEN: "t" })).toThrow(
      ConfigError,
    );
    expect(() => loadNotifyConfig({ WHATSAPP_PHONE_NUMBER_ID: "1065" })).toThrow(
      /WHATSAPP_ACCESS_TOKEN: is required when WHATSAPP_PHONE_NUMBER_ID is set/,
    );
    expect(loadNotifyConfig({}).NOTIFY_CHANNEL_CHECK_INTERVAL).toBe(15 * 60_000);
    expect(loadNotifyConfig({ NOTIFY_CHANNEL_CHECK_INTERVAL: "0s" }).NOTIFY_CHANNEL_CHECK_INTERVAL).toBe(0);
    const config = loadNotifyConfig({
      NOTIFY_CHANNEL_PROVIDER: "whatsapp",
      WHATSAPP_ACCESS_TOKEN: "EAAG-token",
      WHATSAPP_PHONE_NUMBER_ID: "1065",
    });
    expect(config.WHATSAPP_API_BASE_URL).toMatch(/^https:\/\//);
  });

  it("never prints the WhatsApp access token in the start-up configuration line", () => {
    const config = loadNotifyConfig({
      NOTIFY_CHANNEL_PROVIDER: "whatsapp",
      WHATSAPP_ACCESS_TOKEN: "EAAG-secret-token",
      WHATSAPP_PHONE_NUMBER_ID: "1065",
    });
    const logged = redactConfiguration(config);
    expect(logged.WHATSAPP_ACCESS_TOKEN).toBe("[redacted]");
    expect(logged.WHATSAPP_PHONE_NUMBER_ID).toBe("1065");
    expect(JSON.stringify(logged)).not.toContain("EAAG-secret-token");
  });

  it("merges WHATSAPP_TEMPLATES over the defaults and refuses unknown types or malformed JSON", () => {
    const config = loadNotifyConfig({ WHATSAPP_TEMPLATES: '{"update":{"name":"news_v2","language":"pt_BR"}}' });
    expect(config.WHATSAPP_TEMPLATES).toEqual({
      ...defaultWhatsAppTemplates,
      update: { name: "news_v2", language: "pt_BR" },
    });
    expect(() => loadNotifyConfig({ WHATSAPP_TEMPLATES: '{"receipt":{"name":"r","language":"en"}}' })).toThrow(
      /WHATSAPP_TEMPLATES/,
    );
    expect(() => loadNotifyConfig({ WHATSAPP_TEMPLATES: "{nope" })).toThrow(/WHATSAPP_TEMPLATES: must be JSON/);
  });

  it("keeps the lease longer than the provider timeout, so a live send is never settled as unknown", () => {
    expect(() => loadNotifyConfig({ NOTIFICATION_LEASE: "5s", WHATSAPP_TIMEOUT: "5s" })).toThrow(
      /NOTIFICATION_LEASE: must be longer than WHATSAPP_TIMEOUT/,
    );
  });
});
