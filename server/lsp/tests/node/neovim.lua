-- Headless Neovim (0.7: vim.lsp.start_client) against `seedfall lsp`:
-- opens main.go of a workspace that holds a failure and waits for the
-- failure diagnostic. Writes "ok <line> <message>" or "fail <why>" to OUT.
local bin, ws, out = os.getenv('SEEDFALL_BIN'), os.getenv('WS'), os.getenv('OUT')
local function finish(text)
  local f = io.open(out, 'w'); f:write(text); f:close()
  vim.cmd('qa!')
end
local client = vim.lsp.start_client({ cmd = { bin, 'lsp' }, root_dir = ws, name = 'seedfall',
  workspace_folders = { { uri = vim.uri_from_fname(ws), name = 'ws' } } })
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
if found then finish('ok ' .. found.lnum .. ' ' .. found.message) else finish('fail: no failure diagnostic') end
