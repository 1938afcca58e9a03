import{createRequire as __toolhostCreateRequire}from'node:module';const require=__toolhostCreateRequire(import.meta.url);
import{c as a}from"./2DPZUENP.mjs";import"./Z7LOT3CH.mjs";export default a();
