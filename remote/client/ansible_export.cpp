#include "remote/client/ansible_export.h"

#include <cctype>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "remote/client/sha256_file.h"
#include "remote/client/ssh_session.h"

namespace edge::client {
namespace {

namespace fs = std::filesystem;

// An inventory host name from the board's name: letters, digits, '-', '_' and '.' are kept, anything
// else ("nvidia@10.0.0.2:22" given on the command line) becomes '_'.
std::string inventory_name(const std::string& n) {
    std::string out = n.substr(0, 200);
    for (char& c : out)
        if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.')) c = '_';
    return out;
}

bool file_name_ok(const std::string& n) {
    if (n.empty() || n == "." || n == ".." || n.size() > 200) return false;
    if (n.size() >= 5 && n.compare(n.size() - 5, 5, ".part") == 0) return false;  // the upload names
    for (char c : n)
        if (c == '/' || c == '\0' || c == '\n' || c == '\\' || c == '{' || c == '}') return false;
    return true;
}

std::string utc_version() {
    std::time_t t = std::time(nullptr);
    std::tm tm{};
    gmtime_r(&t, &tm);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y%m%dT%H%M%SZ", &tm);
    return buf;
}

Status write_text(const fs::path& p, const std::string& text) {
    fs::path tmp = p;
    tmp += ".tmp";
    {
        std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
        if (!f) return err(tmp.string(), ": cannot create");
        f << text;
        if (!f.flush()) return err(tmp.string(), ": write failed");
    }
    std::error_code ec;
    fs::rename(tmp, p, ec);
    if (ec) return err(p.string(), ": ", ec.message());
    return {};
}

constexpr const char* kPlaybook =
    R"YAML(# EdgeStudio verified deploy, written by `edgestudio-cli boards export-ansible`.
# The same steps as `edgestudio-cli deploy` (docs/remote.md):
#   1. each file goes to <edge_root>/versions/<edge_version>/<name>.part;
#   2. each .part is hashed ON THE BOARD (sha256sum) and compared with the digest taken at export;
#      a mismatch fails that board before anything is renamed or switched;
#   3. verified files are renamed to their names and SHA256SUMS is written;
#   4. previous -> the old current, then current -> the new version, each by rename(2) of a new
#      symlink (atomic); the previous version stays on the board for rollback.
# A board whose current already is this version with the same SHA256SUMS is re-verified and left
# alone; a live version with other contents is refused.
# Run: ansible-playbook -i inventory.json deploy.yml [--limit BOARD]
- name: EdgeStudio verified deploy
  hosts: edge_boards
  gather_facts: false
  vars_files:
    - deploy-vars.json
  vars:
    edge_dir: "{{ edge_root }}/versions/{{ edge_version }}"
  tasks:
    - name: Read the live version
      ansible.builtin.command:
        argv: [readlink, "--", "{{ edge_root }}/current"]
      register: edge_live
      changed_when: false
      failed_when: false

    - name: This version is already live
      when: edge_live.stdout == 'versions/' + edge_version
      block:
        - name: Read its SHA256SUMS
          ansible.builtin.slurp:
            src: "{{ edge_dir }}/SHA256SUMS"
          register: edge_live_sums
        - name: Refuse a live version with other contents
          ansible.builtin.assert:
            that: (edge_live_sums.content | b64decode) == edge_manifest
            fail_msg: "{{ inventory_hostname }}: version {{ edge_version }} is live with other files; export under a new version name"
            quiet: true
        - name: Verify the live files
          ansible.builtin.command:
            argv: [sha256sum, --check, --strict, --quiet, SHA256SUMS]
            chdir: "{{ edge_dir }}"
          changed_when: false
        - name: Nothing to do
          ansible.builtin.meta: end_host

    - name: Create the version folder
      ansible.builtin.file:
        path: "{{ edge_dir }}"
        state: directory
        mode: "0755"

    - name: Upload each file as <name>.part
      ansible.builtin.copy:
        src: "{{ playbook_dir }}/files/{{ item.name }}"
        dest: "{{ edge_dir }}/{{ item.name }}.part"
        mode: "{{ item.mode }}"
      loop: "{{ edge_files }}"
      loop_control:
        label: "{{ item.name }}"

    - name: Hash each upload on the board
      ansible.builtin.command:
        argv: [sha256sum, --binary, "--", "{{ edge_dir }}/{{ item.name }}.part"]
      register: edge_hashes
      changed_when: false
      loop: "{{ edge_files }}"
      loop_control:
        label: "{{ item.name }}"

    - name: Compare with the digests taken at export
      ansible.builtin.assert:
        that: item.stdout.split(' ')[0] == item.item.sha256
        fail_msg: "{{ inventory_hostname }}: {{ edge_dir }}/{{ item.item.name }}.part has SHA-256 {{ item.stdout.split(' ')[0] }}, expected {{ item.item.sha256 }}: the upload is not the exported file; current is unchanged"
        quiet: true
      loop: "{{ edge_hashes.results }}"
      loop_control:
        label: "{{ item.item.name }}"

    - name: Rename the verified files into place
      ansible.builtin.command:
        argv: [mv, -f, "--", "{{ edge_dir }}/{{ item.name }}.part", "{{ edge_dir }}/{{ item.name }}"]
      loop: "{{ edge_files }}"
      loop_control:
        label: "{{ item.name }}"

    - name: Write SHA256SUMS
      ansible.builtin.copy:
        content: "{{ edge_manifest }}"
        dest: "{{ edge_dir }}/SHA256SUMS"
        mode: "0644"

    - name: Keep the old version as previous (rename of a new symlink)
      when: edge_live.rc == 0 and (edge_live.stdout | length) > 0
      ansible.builtin.command:
        argv: [sh, -c, 'ln -sfn "$1" .previous.new && mv -Tf .previous.new previous', sh, "{{ edge_live.stdout }}"]
        chdir: "{{ edge_root }}"

    - name: Switch current to the new version (rename of a new symlink)
      ansible.builtin.command:
        argv: [sh, -c, 'ln -sfn "$1" .current.new && mv -Tf .current.new current', sh, "versions/{{ edge_version }}"]
        chdir: "{{ edge_root }}"
)YAML";

}  // namespace

const char* ansible_playbook_text() { return kPlaybook; }

Result<AnsibleExportReport> export_ansible(const AnsibleExportOptions& o) {
    if (o.out_dir.empty()) return err("export-ansible: no output folder given");
    if (o.boards.empty()) return err("export-ansible: no boards");
    if (o.files.empty()) return err("export-ansible: nothing to deploy");
    AnsibleExportReport rep;
    rep.version = o.version.empty() ? utc_version() : o.version;
    if (!file_name_ok(rep.version)) return err("export-ansible: bad version name '", rep.version, "'");

    nlohmann::json hosts = nlohmann::json::object();
    for (const auto& b : o.boards) {
        std::string name = inventory_name(b.name);
        if (name.empty()) return err("export-ansible: a board without a name (", b.source, ")");
        if (hosts.contains(name))
            return err("export-ansible: boards '", b.name, "' (", b.source, ") and another one are both '", name,
                       "' in the inventory; rename one");
        if (b.root.empty() || b.root[0] != '/')
            return err("export-ansible: board '", b.name, "': the board folder must be absolute (got '", b.root, "')");
        nlohmann::json h = {{"ansible_host", b.host}, {"edge_root", b.root}};
        if (b.port) h["ansible_port"] = b.port;
        if (!b.user.empty()) h["ansible_user"] = b.user;
        if (!b.identity.empty()) h["ansible_ssh_private_key_file"] = expand_home(b.identity);
        hosts[name] = h;
    }

    std::error_code ec;
    fs::path out = o.out_dir;
    fs::create_directories(out / "files", ec);
    if (ec) return err(out.string(), ": cannot create: ", ec.message());

    nlohmann::json files = nlohmann::json::array();
    std::string manifest;
    for (const auto& f : o.files) {
        std::string name = f.remote_name.empty() ? fs::path(f.local_path).filename().string() : f.remote_name;
        if (!file_name_ok(name)) return err("export-ansible: bad file name '", name, "'");
        if (!fs::is_regular_file(f.local_path, ec)) return err("export-ansible: ", f.local_path, ": no such file");
        fs::path dst = out / "files" / name;
        // Copy first, hash the copy: the digest checked on the board is that of the bundled file.
        fs::copy_file(f.local_path, dst, fs::copy_options::overwrite_existing, ec);
        if (ec) return err("export-ansible: copying ", f.local_path, " to ", dst.string(), ": ", ec.message());
        auto d = sha256_of_file(dst.string());
        if (!d.ok()) return err("export-ansible: ", d.message());
        files.push_back({{"name", name}, {"sha256", digest_hex(d.value())}, {"mode", f.executable ? "0755" : "0644"}});
        manifest += digest_hex(d.value()) + " *" + name + "\n";
        rep.files.emplace_back(name, d.value());
    }

    std::string ssh_args;
    if (!o.known_hosts.empty())
        ssh_args += "-o UserKnownHostsFile=" + shell_quote(fs::absolute(o.known_hosts).string());
    ssh_args += std::string(ssh_args.empty() ? "" : " ") +
                "-o StrictHostKeyChecking=" + (o.accept_new_host_key ? "accept-new" : "yes");
    if (!o.ssh_config.empty())
        ssh_args += std::string(ssh_args.empty() ? "" : " ") + "-F " + shell_quote(fs::absolute(o.ssh_config).string());
    nlohmann::json group_vars = {{"ansible_python_interpreter", o.python}};
    if (!ssh_args.empty()) group_vars["ansible_ssh_common_args"] = ssh_args;
    nlohmann::json inventory = {{"all", {{"children", {{"edge_boards", {{"hosts", hosts}, {"vars", group_vars}}}}}}}};
    nlohmann::json vars = {{"edge_version", rep.version}, {"edge_files", files}, {"edge_manifest", manifest}};

    rep.inventory = (out / "inventory.json").string();
    rep.vars = (out / "deploy-vars.json").string();
    rep.playbook = (out / "deploy.yml").string();
    EDGE_TRY(write_text(rep.inventory, inventory.dump(2) + "\n"));
    EDGE_TRY(write_text(rep.vars, vars.dump(2) + "\n"));
    EDGE_TRY(write_text(rep.playbook, kPlaybook));
    EDGE_TRY(
        write_text(out / "ansible.cfg",
                   "# Host keys are checked (an unknown or changed key fails the board); no password is used.\n"
                   "[defaults]\ninventory = inventory.json\nhost_key_checking = True\nretry_files_enabled = False\n"
                   "[ssh_connection]\npipelining = True\n"));
    return rep;
}

}  // namespace edge::client
