// A "server" that starts a child of its own, then never answers: the host must give up
// at its deadline and kill the whole process group. PID_FILE gets "server child".
import { spawn } from "node:child_process";
import { writeFileSync } from "node:fs";

const child = spawn("sleep", ["300"], { stdio: "ignore" });
writeFileSync(process.env.PID_FILE, `${process.pid} ${child.pid}`);
process.stdin.resume();
setInterval(() => {}, 1 << 30);
