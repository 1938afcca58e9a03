import{createRequire as __toolhostCreateRequire}from'node:module';const require=__toolhostCreateRequire(import.meta.url);
