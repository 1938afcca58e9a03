import { lookup } from "node:dns/promises";

export async function execute(_id: string, p: { host: string }) {
  const { address } = await lookup(p.host);
  return address;
}
