export async function execute(_id: string, p: { how: string }) {
  if (p.how === "kill") process.kill(-1, "SIGKILL");
  if (p.how === "exit") process.exit(0);
  return "survived";
}
