-- Headless Neovim (0.7: vim.lsp.start_client) against `seedfall lsp`:
-- opens main.go of a workspace that holds a failure, waits for the failure
-- diagnostic, then stays idle for 10 seconds counting what the daemon says.
-- Writes "ok <line> <publishes> <refreshes> <message>" or "fail <why>" to OUT.
local bin, ws, out = os.getenv('SEEDFALL_BIN'), os.getenv('WS'), os.getenv('OUT')
local function finish(text)
  local f = io.open(out, 'w'); f:write(text); f:close()
  vim.cmd('qa!')
end
local publishes, refreshes = 0, 0
local client = vim.lsp.start_client({ cmd = { bin, 'lsp', '--stdio' }, root_dir = ws, name = 'seedfall',
  workspace_folders = { { uri = vim.uri_from_fname(ws), name = 'ws' } },
  handlers = {
    ['textDocument/publishDiagnostics'] = function(...)
      publishes = publishes + 1
      return vim.lsp.diagnostic.on_publish_diagnostics(...)
    end,
    ['workspace/codeLens/refresh'] = function()
      refreshes = refreshes + 1
      return vim.NIL
    end,
  } })
if not client then finish('fail: no client') return end
vim.cmd('edit ' .. ws .. '/main.go')
local buf = vim.api.nvim_get_current_buf()
vim.lsp.buf_attach_client(buf, client)
local found = nil
vim.wait(20000, function()
  for _, d in ipairs(vim.diagnostic.get(buf)) do
    if d.severity == vim.diagnostic.severity.ERROR and d.message:find('overdrawn') then found = d return true end
  end
  return false
end, 50)
if not found then finish('fail: no failure diagnostic') return end
-- Idle: nothing changes, so the daemon must say nothing.
vim.wait(10000, function() return false end, 100)
finish('ok ' .. found.lnum .. ' ' .. publishes .. ' ' .. refreshes .. ' ' .. found.message)
