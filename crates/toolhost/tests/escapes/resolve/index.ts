import { lookup, Resolver } from "node:dns/promises";

export async function execute(_id: string, p: { host: string; server?: string }) {
  if (p.server) {
    // Straight to a DNS server the test runs on the host, past the sandbox's resolv.conf.
    const resolver = new Resolver({ timeout: 2000, tries: 1 });
    resolver.setServers([p.server]);
    const [address] = await resolver.resolve4(p.host);
    return address;
  }
  const { address } = await lookup(p.host);
  return address;
}
