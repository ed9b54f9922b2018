// The ruleval extension: starts `ruleval lsp` over stdio for ruleset files (language id `ruleval`).
// Highlighting comes from the TextMate grammar (../ruleval.tmLanguage.json, see package.json).
"use strict";

const vscode = require("vscode");
const { LanguageClient, TransportKind } = require("vscode-languageclient/node");

let client;

function activate(context) {
  const config = vscode.workspace.getConfiguration("ruleval");
  const folder = vscode.workspace.workspaceFolders && vscode.workspace.workspaceFolders[0];
  // settings may name the workspace's own ruleval: "${workspaceFolder}/.venv/bin/ruleval"
  const expand = (text) => (folder ? text.split("${workspaceFolder}").join(folder.uri.fsPath) : text);
  const command = expand(config.get("server.command", "ruleval"));
  const args = config.get("server.args", ["lsp"]).map(expand);
  // diagnostics name files relative to the server's working folder: the workspace's
  const options = folder ? { cwd: folder.uri.fsPath } : {};
  const serverOptions = {
    run: { command, args, transport: TransportKind.stdio, options },
    debug: { command, args, transport: TransportKind.stdio, options },
  };
  const clientOptions = {
    documentSelector: [{ scheme: "file", language: "ruleval" }],
    synchronize: {
      // a ruleset's clause catalogue, data and schemas: a change on disk is seen at the next check
      fileEvents: vscode.workspace.createFileSystemWatcher("**/*.{rules,yaml,yml,json}"),
    },
  };
  client = new LanguageClient("ruleval", "ruleval", serverOptions, clientOptions);
  context.subscriptions.push({ dispose: () => client && client.stop() });
  return client.start();
}

function deactivate() {
  return client ? client.stop() : undefined;
}

module.exports = { activate, deactivate };
