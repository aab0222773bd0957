// Exports a fleet deployment as an Ansible bundle that performs the same verified deploy as
// remote::deploy (docs/remote.md, "Ansible"): files into <root>/versions/<version>/ as <name>.part,
// SHA-256 checked on the board against digests taken at export time, renamed into place,
// SHA256SUMS written, then `previous` and `current` switched by rename(2) of new symlinks.
//
//   OUT/inventory.json   group edge_boards: one host per board (address, port, user, key, edge_root)
//   OUT/deploy-vars.json edge_version, edge_files (name, sha256, mode), edge_manifest (SHA256SUMS)
//   OUT/deploy.yml       the playbook (ansible.builtin modules only; the board needs python3)
//   OUT/files/<name>     the files to deploy, copied at export (their digests are the ones checked)
//   OUT/ansible.cfg      host key checking on; the inventory above
#pragma once
#include <string>
#include <vector>

#include "engine/core/result.h"
#include "remote/client/boards.h"
#include "remote/client/deploy.h"

namespace edge::client {

struct AnsibleExportOptions {
    std::string out_dir;  // created if missing; existing bundle files are replaced
    std::string version;  // "" = a UTC timestamp taken now
    std::vector<DeployFile> files;
    std::vector<Board> boards;                // root must be set (absolute) for every board
    std::string known_hosts;                  // "": ssh's default (~/.ssh/known_hosts); checking stays on
    std::string ssh_config;                   // "": ssh's default (~/.ssh/config)
    bool accept_new_host_key = false;         // ssh's StrictHostKeyChecking=accept-new (a changed key still fails)
    std::string python = "/usr/bin/python3";  // the board's interpreter for Ansible modules
};

struct AnsibleExportReport {
    std::string version;
    std::string inventory, playbook, vars;              // paths written
    std::vector<std::pair<std::string, Digest>> files;  // name in the version folder, SHA-256
};

Result<AnsibleExportReport> export_ansible(const AnsibleExportOptions& opts);

// The playbook text (the same for every export; its inputs are the inventory and vars file).
const char* ansible_playbook_text();

}  // namespace edge::client
