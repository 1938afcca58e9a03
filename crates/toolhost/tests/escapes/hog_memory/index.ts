export async function execute(_id: string, p: { mb: number }) {
  const chunks: Buffer[] = [];
  for (let i = 0; i < p.mb; i += 16) chunks.push(Buffer.alloc(16 * 1024 * 1024, 1));
  return `holding ${chunks.length * 16} MiB`;
}
