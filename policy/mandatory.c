/*
 * mandatory.c - the rules every policy gets, whatever it says (SPEC §3.3,
 * §3.6), kept in one place so that the loader, `run` and `check -v` read
 * the same list:
 *
 *  - one table of filesystem paths: credential stores (denied for reading
 *    and for writing) and the files through which the host runs code later
 *    (shell start-up files, git's global config, ~/.ssh, autostart
 *    entries, systemd user units, agent and editor settings: denied for
 *    writing, also when they do not exist yet). Each row says whether it
 *    lies under HOME, under each writable workspace, or both;
 *  - the environment rule: a variable the policy does not name is dropped
 *    when its name or its value looks like a credential.
 *
 * policy_bind() (bind.c) expands the HOME rows into the policy's
 * denyRead/denyWrite lists with the home the caller read; `run`
 * (proxy/cli/plan.c) adds the workspace rows under the
 * working directory and each allowWrite directory, and applies the
 * environment rule. Every function here is pure. docs/config.md says why
 * each row is there.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "policy_int.h"
#include "base/hex.h"

/* Short aliases for the table. */
#define R POLICY_MAND_READ
#define W POLICY_MAND_WRITE
#define H POLICY_MAND_HOME
#define S POLICY_MAND_WORKSPACE
#define Y POLICY_MAND_SYSTEM
#define D POLICY_MAND_WS_IF_DIR
#define E POLICY_MAND_WS_EXISTING
#define P POLICY_MAND_WS_POINTER
#define Z POLICY_MAND_SESSION
#define T POLICY_MAND_HOME_DIR

/*
 * The credential stores (SPEC §3.6), by category: unreadable, and
 * unwritable too, since most are also configuration the host trusts:
 * ~/.ssh/config (ProxyCommand), ~/.aws/config (credential_process),
 * ~/.kube/config (exec plugins), ~/.docker/config.json (credsStore),
 * ~/.gnupg/gpg-agent.conf (pinentry-program). The list is a list: a store
 * it misses is one denyRead entry in the policy (docs/config.md).
 *
 * env: the variables through which the store's tool finds it elsewhere,
 * each "$NAME" (the variable names the store itself), "$NAME/sub" (the
 * store under the directory it names) or "$NAME:" (a colon-separated
 * list of stores, like KUBECONFIG); policy_bind() denies the store there
 * too, as the host's environment says when `run` starts. A row under
 * ~/.config, ~/.local/share, ~/.local/state or ~/.cache is also denied
 * under $XDG_CONFIG_HOME, $XDG_DATA_HOME, $XDG_STATE_HOME or $XDG_CACHE_HOME
 * without saying so here (policy_mandatory_xdg()).
 *
 * Rows with an absolute path are the host's own secrets (where
 * POLICY_MAND_SYSTEM): files only root may read. Passavant run by root
 * maps root to root, so the kernel's permissions would not stop the
 * command; the table does, whoever runs it.
 */
struct store_row {
	struct policy_mandatory m;
	const char *env; /* NULL, or the variables that relocate it (above) */
};

static const struct store_row stores[] = {
	/* Keys and cloud credentials */
	{{".ssh", R | W, H, "ssh keys; authorized_keys, rc and config run commands"}, NULL},
	{{".aws", R | W, H, "AWS credentials; config can run credential_process"},
	 "$AWS_SHARED_CREDENTIALS_FILE $AWS_CONFIG_FILE $AWS_WEB_IDENTITY_TOKEN_FILE"},
	{{".gnupg", R | W, H, "GnuPG keys; agent config names programs"}, "$GNUPGHOME"},
	{{".config/gcloud", R | W, H, "Google Cloud credentials"}, "$CLOUDSDK_CONFIG"},
	{{".azure", R | W, H, "Azure CLI tokens"}, "$AZURE_CONFIG_DIR"},
	{{".oci", R | W, H, "Oracle Cloud keys"}, "$OCI_CLI_CONFIG_FILE"},
	{{".config/doctl", R | W, H, "DigitalOcean token"}, NULL},
	{{".kube", R | W, H, "Kubernetes credentials; exec plugins run commands"}, "$KUBECONFIG:"},
	{{".minikube", R | W, H, "minikube client keys"}, "$MINIKUBE_HOME/.minikube"},
	{{".talos", R | W, H, "Talos client keys"}, "$TALOSCONFIG"},
	{{".config/helm/repositories.yaml", R | W, H, "Helm repository passwords"},
	 "$HELM_REPOSITORY_CONFIG"},
	{{".config/helm/registry", R | W, H, "Helm registry credentials"}, "$HELM_REGISTRY_CONFIG"},
	{{".config/sops/age/keys.txt", R | W, H, "SOPS age private keys"}, "$SOPS_AGE_KEY_FILE"},
	{{".ollama/id_ed25519", R | W, H, "Ollama private key"}, NULL},
	{{".cloudflared", R | W, H, "Cloudflare tunnel certificate and credentials"},
	 "$TUNNEL_ORIGIN_CERT"},
	{{".pki/nssdb", R | W, H, "NSS certificate and key database"}, NULL},
	{{".config/openstack/clouds.yaml", R | W, H, "OpenStack passwords"}, "$OS_CLIENT_CONFIG_FILE"},
	{{".config/hcloud", R | W, H, "Hetzner Cloud token"}, "$HCLOUD_CONFIG"},
	{{".config/lxc", R | W, H, "LXD client key and remotes' trust"}, "$LXD_CONF"},
	{{".config/incus", R | W, H, "Incus client key and remotes' trust"}, "$INCUS_CONF"},

	{{".config/linode-cli", R | W, H, "Linode CLI token"}, NULL},
	{{".config/scw", R | W, H, "Scaleway CLI keys"}, "$SCW_CONFIG_PATH"},
	{{".config/exoscale", R | W, H, "Exoscale keys"}, NULL},
	{{".bluemix", R | W, H, "IBM Cloud CLI tokens"}, NULL},
	{{".aliyun", R | W, H, "Alibaba Cloud CLI keys"}, NULL},
	{{".tccli", R | W, H, "Tencent Cloud CLI keys"}, NULL},
	{{".ovh.conf", R | W, H, "OVH API keys"}, NULL},
	{{".vultr-cli.yaml", R | W, H, "Vultr API key"}, NULL},
	{{".boto", R | W, H, "boto / gsutil keys"}, "$BOTO_CONFIG"},
	{{".s3cfg", R | W, H, "s3cmd keys"}, "$S3CMD_CONFIG"},
	{{".mc", R | W, H, "MinIO client keys"}, NULL},
	{{".config/rclone", R | W, H, "rclone remotes' credentials"}, "$RCLONE_CONFIG"},
	{{".databrickscfg", R | W, H, "Databricks token"}, "$DATABRICKS_CONFIG_FILE"},
	{{".terraformrc", R | W, H, "Terraform credentials; names provider programs"},
	 "$TF_CLI_CONFIG_FILE $TERRAFORM_CONFIG"},
	{{".terraform.d/credentials.tfrc.json", R | W, H, "Terraform Cloud token"}, NULL},
	{{".pulumi/credentials.json", R | W, H, "Pulumi token"}, "$PULUMI_HOME/credentials.json"},
	{{".vault-token", R | W, H, "HashiCorp Vault token"}, NULL},
	{{".vault", R | W, H, "Vault CLI config: token_helper names a program"}, "$VAULT_CONFIG_PATH"},
	/* Service CLIs */
	{{".config/gh", R | W, H, "GitHub CLI token"}, "$GH_CONFIG_DIR"},
	{{".config/hub", R | W, H, "hub (GitHub) token"}, "$HUB_CONFIG"},
	{{".config/glab-cli", R | W, H, "GitLab CLI token"}, "$GLAB_CONFIG_DIR"},
	{{".config/github-copilot", R | W, H, "GitHub Copilot tokens"}, NULL},
	{{".config/op", R | W, H, "1Password CLI"}, "$OP_CONFIG_DIR"},
	{{".fly", R | W, H, "Fly.io token"}, NULL},
	{{".wrangler", R | W, H, "Cloudflare Wrangler token"}, NULL},
	{{".config/.wrangler", R | W, H, "Cloudflare Wrangler token"}, NULL},
	{{".config/stripe", R | W, H, "Stripe CLI keys"}, NULL},
	{{".config/ngrok", R | W, H, "ngrok token"}, NULL},
	{{".ngrok2", R | W, H, "ngrok token (old place)"}, NULL},
	{{".supabase", R | W, H, "Supabase token"}, NULL},
	{{".vercel", R | W, H, "Vercel token"}, NULL},
	{{".local/share/com.vercel.cli", R | W, H, "Vercel token"}, NULL},
	{{".config/netlify", R | W, H, "Netlify token"}, NULL},
	{{".railway", R | W, H, "Railway token"}, NULL},
	{{".config/heroku", R | W, H, "Heroku CLI"}, NULL},
	{{".config/configstore", R | W, H, "Firebase CLI and other Node CLIs' tokens"}, NULL},
	{{".circleci/cli.yml", R | W, H, "CircleCI token"}, NULL},
	{{".snowflake", R | W, H, "Snowflake connections"}, "$SNOWFLAKE_HOME"},
	{{".snowsql", R | W, H, "SnowSQL passwords"}, NULL},
	{{".sentryclirc", R | W, H, "Sentry CLI token"}, NULL},
	{{".config/tea", R | W, H, "Gitea tea tokens"}, NULL},
	{{".wakatime.cfg", R | W, H, "WakaTime API key"}, "$WAKATIME_HOME/.wakatime.cfg"},
	{{".dbt/profiles.yml", R | W, H, "dbt database passwords"}, "$DBT_PROFILES_DIR/profiles.yml"},
	{{".kaggle/kaggle.json", R | W, H, "Kaggle API key"}, "$KAGGLE_CONFIG_DIR/kaggle.json"},
	{{".cache/huggingface/token", R | W, H, "Hugging Face token"}, "$HF_HOME/token $HF_TOKEN_PATH"},
	{{".huggingface/token", R | W, H, "Hugging Face token (old place)"}, NULL},
	/* Round 38 of the attack: stores the list missed, each read in a
	 * default run, by category with their neighbours. Access and signing
	 * keys: */
	{{".tsh", R | W, H, "Teleport tsh keys and certificates"}, "$TELEPORT_HOME"},
	{{".step", R | W, H, "smallstep step CLI: CA and provisioner keys"}, "$STEPPATH"},
	{{".chef", R | W, H, "Chef client keys and credentials"}, NULL},
	{{".minisign", R | W, H, "minisign secret key"}, NULL},
	{{".docker/trust", R | W, H, "Docker content trust signing keys"}, "$DOCKER_CONFIG/trust"},
	{{".edgerc", R | W, H, "Akamai EdgeGrid credentials"}, NULL},
	{{".vault_pass", R | W, H, "Ansible Vault password file"}, "$ANSIBLE_VAULT_PASSWORD_FILE"},
	{{".vault_pass.txt", R | W, H, "Ansible Vault password file"}, NULL},
	{{".awsvault", R | W, H, "aws-vault keys (file backend)"}, "$AWS_VAULT_FILE_DIR"},
	{{".granted", R | W, H, "Granted credentials (file backend)"}, NULL},
	{{".Leapp", R | W, H, "Leapp sessions"}, NULL},
	{{".config/keybase", R | W, H, "Keybase device keys"}, NULL},
	{{".local/share/keybase", R | W, H, "Keybase device keys"}, NULL},
	{{".config/borg", R | W, H, "Borg repository keys"}, "$BORG_CONFIG_DIR $BORG_KEYS_DIR"},
	/* ... cloud, CI and platform CLIs' tokens: */
	{{".config/fastly", R | W, H, "Fastly API tokens"}, NULL},
	{{".jfrog", R | W, H, "JFrog CLI access tokens"}, "$JFROG_CLI_HOME_DIR"},
	{{".mcli", R | W, H, "MinIO client keys (mcli)"}, NULL},
	{{".passwd-s3fs", R | W, H, "s3fs keys"}, NULL},
	{{".expo", R | W, H, "Expo session"}, NULL},
	{{".sfdx", R | W, H, "Salesforce CLI tokens"}, NULL},
	{{".sf", R | W, H, "Salesforce CLI tokens"}, NULL},
	{{".civo.json", R | W, H, "Civo API key"}, NULL},
	{{".config/upctl.yaml", R | W, H, "UpCloud credentials"}, NULL},
	{{".twilio-cli", R | W, H, "Twilio API keys"}, NULL},
	{{".okta", R | W, H, "Okta API token"}, NULL},
	{{".modal.toml", R | W, H, "Modal token"}, NULL},
	{{".megarc", R | W, H, "MEGA credentials"}, NULL},
	{{".netlify", R | W, H, "Netlify token (old place)"}, NULL},
	{{".config/dart/pub-credentials.json", R | W, H, "pub.dev token"}, NULL},
	{{".pub-cache/credentials.json", R | W, H, "pub.dev token (old place)"}, "$PUB_CACHE/credentials.json"},
	{{".dropbox", R | W, H, "Dropbox client's account data"}, NULL},
	/* ... HTTP and database clients' saved authorizations: */
	{{".config/httpie/sessions", R | W, H, "HTTPie sessions: saved authorization and cookies"},
	 "$HTTPIE_CONFIG_DIR/sessions"},
	{{".config/Postman", R | W, H, "Postman tokens and environments"}, NULL},
	{{".config/Insomnia", R | W, H, "Insomnia tokens and environments"}, NULL},
	{{".local/share/DBeaverData", R | W, H, "DBeaver saved passwords (a fixed key)"}, NULL},
	{{".pgadmin", R | W, H, "pgAdmin saved passwords"}, NULL},
	/* Round 39 of the attack: stores still on no row, by category. API
	 * clients and CI agents and CLIs; */
	{{".config/bruno", R | W, H, "Bruno API client: environment secrets, OAuth2 tokens, cookies"}, NULL},
	{{".saml2aws", R | W, H, "saml2aws IdP accounts (and passwords without a keyring)"},
	 "$SAML2AWS_CONFIGFILE"},
	{{".buildkite-agent/buildkite-agent.cfg", R | W, H, "Buildkite agent token (not its builds)"},
	 "$BUILDKITE_AGENT_CONFIG"},
	{{".config/bk.yaml", R | W, H, "Buildkite CLI API token"}, NULL},
	{{".gitlab-runner", R | W, H, "GitLab runner tokens (user mode config.toml)"}, NULL},
	{{".config/argocd", R | W, H, "Argo CD CLI auth tokens"}, "$ARGOCD_CONFIG_DIR"},
	{{".flyrc", R | W, H, "Concourse fly targets' tokens"}, NULL},
	{{".spin", R | W, H, "Spinnaker CLI credentials"}, NULL},
	{{".cf", R | W, H, "Cloud Foundry CLI tokens"}, "$CF_HOME/.cf"},
	{{".doppler", R | W, H, "Doppler CLI token"}, NULL},
	{{".infisical", R | W, H, "Infisical CLI session"}, NULL},
	/* password managers and mounts; */
	{{".local/share/lpass", R | W, H, "LastPass CLI session key and blob"}, "$LPASS_HOME"},
	{{".config/lpass", R | W, H, "LastPass CLI session (XDG config)"}, NULL},
	{{".lpass", R | W, H, "LastPass CLI session (old place)"}, NULL},
	{{".local/share/rbw", R | W, H, "rbw (Bitwarden) vault and device keys"}, NULL},
	{{".config/rbw", R | W, H, "rbw (Bitwarden) settings"}, NULL},
	{{".local/share/gopass", R | W, H, "gopass stores"}, NULL},
	{{".config/gopass", R | W, H, "gopass settings and age identities"}, NULL},
	{{".authinfo", R | W, H, "Emacs auth-source passwords (magit forge, Gnus)"}, NULL},
	{{".authinfo.gpg", R | W, H, "Emacs auth-source passwords (encrypted)"}, NULL},
	{{".smbcredentials", R | W, H, "mount.cifs credentials file"}, NULL},
	{{".cifs-credentials", R | W, H, "mount.cifs credentials file"}, NULL},
	{{".config/Lens", R | W, H, "Lens: copies of kubeconfigs"}, NULL},
	{{".config/OpenLens", R | W, H, "OpenLens: copies of kubeconfigs"}, NULL},
	{{".lima/_config", R | W, H, "Lima's ssh key to every VM (user)"}, "$LIMA_HOME/_config"},
	{{".colima/_lima/_config", R | W, H, "Colima's Lima ssh key"}, NULL},
	{{".gitkraken", R | W, H, "GitKraken hosting service tokens"}, NULL},
	{{".config/GitHub Desktop", R | W, H, "GitHub Desktop cookies and tokens"}, NULL},
	/* the editors VS Code's globalStorage has under other names (forks,
	 * builds, its remote servers): extension tokens, as Code's; */
	{{".config/Code - Insiders/User/globalStorage", R | W, H, "VS Code Insiders extension tokens"}, NULL},
	{{".config/Code - OSS/User/globalStorage", R | W, H, "Code - OSS extension tokens"}, NULL},
	{{".config/VSCodium/User/globalStorage", R | W, H, "VSCodium extension tokens"}, NULL},
	{{".config/Windsurf/User/globalStorage", R | W, H, "Windsurf extension tokens"}, NULL},
	{{".config/Kiro/User/globalStorage", R | W, H, "Kiro extension tokens"}, NULL},
	{{".config/Trae/User/globalStorage", R | W, H, "Trae extension tokens"}, NULL},
	{{".config/Positron/User/globalStorage", R | W, H, "Positron extension tokens"}, NULL},
	{{".vscode-server/data/User/globalStorage", R | W, H, "VS Code remote extension tokens"}, NULL},
	{{".vscode-server-insiders/data/User/globalStorage", R | W, H, "VS Code remote extension tokens"},
	 NULL},
	{{".cursor-server/data/User/globalStorage", R | W, H, "Cursor remote extension tokens"}, NULL},
	{{".windsurf-server/data/User/globalStorage", R | W, H, "Windsurf remote extension tokens"}, NULL},
	{{".vscodium-server/data/User/globalStorage", R | W, H, "VSCodium remote extension tokens"}, NULL},
	/* chat applications' sessions (Electron profiles, as Slack's). */
	{{".config/Element", R | W, H, "Element (Matrix) session keys"}, NULL},
	{{".config/Mattermost", R | W, H, "Mattermost session cookies"}, NULL},
	{{".config/teams-for-linux", R | W, H, "Microsoft Teams session cookies"}, NULL},
	{{".config/Microsoft/Microsoft Teams", R | W, H, "Microsoft Teams session cookies"}, NULL},
	{{".zoom/data", R | W, H, "Zoom session database"}, NULL},
	/* Agent CLIs, and passavant's own key */
	{{".claude/.credentials.json", R | W, H, "Claude CLI credentials"},
	 "$CLAUDE_CONFIG_DIR/.credentials.json"},
	{{".codex/auth.json", R | W, H, "Codex CLI credentials"}, "$CODEX_HOME/auth.json"},
	{{".gemini/oauth_creds.json", R | W, H, "Gemini CLI credentials"}, NULL},
	/* Round 32 of the attack: more agents' and model CLIs' keys. */
	{{".qwen/oauth_creds.json", R | W, H, "Qwen Code credentials"}, NULL},
	{{".local/share/opencode/auth.json", R | W, H, "opencode provider keys"}, NULL},
	{{".config/io.datasette.llm/keys.json", R | W, H, "llm (Datasette) API keys"},
	 "$LLM_USER_PATH/keys.json"},
	{{".continue", R | W, H, "Continue API keys (config.yaml, .env); MCP servers run commands"},
	 "$CONTINUE_GLOBAL_DIR"},
	{{".aider.conf.yml", R | W, H, "aider API keys; lint-cmd and test-cmd run after edits"}, NULL},
	{{".aider", R | W, H, "aider OAuth keys (oauth-keys.env)"}, NULL},
	{{".config/goose/secrets.yaml", R | W, H, "goose provider keys (without a keyring)"}, NULL},
	{{".local/share/amp/secrets.json", R | W, H, "Amp API key"}, NULL},
	{{".config/aichat/config.yaml", R | W, H, "aichat API keys"}, NULL},
	{{".config/shell_gpt/.sgptrc", R | W, H, "shell_gpt API key"}, NULL},
	{{".env", R | W, H, "a dotenv file in HOME (aider and dotenv loaders read it): secrets"},
	 NULL},
	{{".local/state/passavant", R | W, H, "passavant's sentinel key and ledger (stable sentinels)"},
	 NULL},
	/* Containers and package registries */
	{{".docker/config.json", R | W, H, "registry credentials; credsStore names a program"},
	 "$DOCKER_CONFIG/config.json"},
	{{".docker/key.pem", R | W, H, "Docker TLS client key"}, "$DOCKER_CERT_PATH/key.pem"},
	{{".config/containers/auth.json", R | W, H, "podman/buildah registry credentials"},
	 "$REGISTRY_AUTH_FILE $XDG_RUNTIME_DIR/containers/auth.json"},
	{{".npmrc", R | W, H, "npm token; node-options and script-shell run code"},
	 "$NPM_CONFIG_USERCONFIG $npm_config_userconfig"},
	{{".yarnrc", R | W, H, "yarn 1 registry token; yarn-path names the program yarn runs"}, NULL},
	{{".yarnrc.yml", R | W, H, "yarn npmAuthToken"}, NULL},
	{{".bunfig.toml", R | W, H, "bun registry token; preload scripts"}, NULL},
	{{".pypirc", R | W, H, "PyPI upload token"}, NULL},
	{{".pip/pip.conf", R | W, H, "pip index URL with password"}, NULL},
	{{".config/pip/pip.conf", R | W, H, "pip index URL with password"}, "$PIP_CONFIG_FILE"},
	{{".config/uv/uv.toml", R | W, H, "uv index credentials"}, "$UV_CONFIG_FILE"},
	{{".config/pypoetry/auth.toml", R | W, H, "Poetry repository passwords"},
	 "$POETRY_CONFIG_DIR/auth.toml"},
	{{".gem/credentials", R | W, H, "RubyGems API key"}, NULL},
	{{".bundle/config", R | W, H, "Bundler source credentials"}, "$BUNDLE_USER_CONFIG"},
	{{".composer/auth.json", R | W, H, "Composer tokens"}, "$COMPOSER_HOME/auth.json"},
	{{".config/composer/auth.json", R | W, H, "Composer tokens (XDG)"}, NULL},
	{{".cargo/credentials.toml", R | W, H, "cargo registry token"}, "$CARGO_HOME/credentials.toml"},
	{{".cargo/credentials", R | W, H, "cargo registry token (old name)"}, "$CARGO_HOME/credentials"},
	{{".nuget/NuGet/NuGet.Config", R | W, H, "NuGet feed passwords"}, NULL},
	{{".config/NuGet/NuGet.Config", R | W, H, "NuGet feed passwords"}, NULL},
	{{".m2/settings.xml", R | W, H, "Maven server passwords"}, NULL},
	{{".m2/settings-security.xml", R | W, H, "Maven master password"}, NULL},
	{{".gradle/gradle.properties", R | W, H, "Gradle publishing credentials"},
	 "$GRADLE_USER_HOME/gradle.properties"},
	{{".ivy2/.credentials", R | W, H, "Ivy / sbt repository password"}, NULL},
	{{".sbt/.credentials", R | W, H, "sbt repository password"}, NULL},
	/* git and generic password files */
	{{".git-credentials", R | W, H, "git credential store"}, NULL},
	{{".config/git/credentials", R | W, H, "git credential store (XDG)"}, NULL},
	{{".netrc", R | W, H, "passwords for curl, git, ftp"}, "$NETRC"},
	{{"_netrc", R | W, H, "passwords for curl, git, ftp (other spelling)"}, NULL},
	{{".pgpass", R | W, H, "PostgreSQL passwords"}, "$PGPASSFILE"},
	{{".pg_service.conf", R | W, H, "PostgreSQL service passwords"}, "$PGSERVICEFILE"},
	{{".my.cnf", R | W, H, "MySQL password"}, "$MYSQL_HOME/my.cnf"},
	{{".mylogin.cnf", R | W, H, "MySQL login paths (obfuscated passwords)"},
	 "$MYSQL_TEST_LOGIN_FILE"},
	/* Password managers, keyrings, desktop applications */
	{{".password-store", R | W, H, "pass password store"}, "$PASSWORD_STORE_DIR"},
	{{".local/share/keyrings", R | W, H, "GNOME keyring"}, NULL},
	{{".config/Bitwarden CLI", R | W, H, "Bitwarden CLI vault and session"},
	 "$BITWARDENCLI_APPDATA_DIR"},
	{{".config/Slack", R | W, H, "Slack cookies and tokens"}, NULL},
	{{".config/discord", R | W, H, "Discord token"}, NULL},
	{{".config/Code/User/globalStorage", R | W, H, "VS Code extension tokens (state.vscdb)"},
	 NULL},
	{{".config/Cursor/User/globalStorage", R | W, H, "Cursor extension tokens (state.vscdb)"},
	 NULL},
	{{".thunderbird", R | W, H, "Thunderbird saved passwords"}, NULL},
	{{".mozilla", R | W, H, "Firefox profiles: cookies, saved passwords"}, NULL},
	{{".config/google-chrome", R | W, H, "Chrome profiles: cookies, saved passwords"}, NULL},
	{{".config/chromium", R | W, H, "Chromium profiles: cookies, saved passwords"}, NULL},
	{{".config/BraveSoftware", R | W, H, "Brave profiles: cookies, saved passwords"}, NULL},
	{{".config/microsoft-edge", R | W, H, "Edge profiles: cookies, saved passwords"}, NULL},
	/* Round 32 of the attack: other browsers, KDE's wallet, JetBrains'
	 * store, wallets of coins, dotfile managers' copies. */
	{{".config/vivaldi", R | W, H, "Vivaldi profiles: cookies, saved passwords"}, NULL},
	{{".config/opera", R | W, H, "Opera profiles: cookies, saved passwords"}, NULL},
	{{".config/google-chrome-beta", R | W, H, "Chrome beta profiles"}, NULL},
	{{".config/google-chrome-unstable", R | W, H, "Chrome dev profiles"}, NULL},
	{{".librewolf", R | W, H, "LibreWolf profiles: cookies, saved passwords"}, NULL},
	{{".waterfox", R | W, H, "Waterfox profiles: cookies, saved passwords"}, NULL},
	{{".zen", R | W, H, "Zen browser profiles: cookies, saved passwords"}, NULL},
	{{".local/share/kwalletd", R | W, H, "KDE wallet (KWallet)"}, NULL},
	{{".kde/share/apps/kwallet", R | W, H, "KDE wallet (KDE 4)"}, NULL},
	{{".local/share/atuin", R | W, H, "atuin shell history and its sync key"}, NULL},
	{{".config/JetBrains", R | W, H, "JetBrains IDEs: c.kdbx and c.pwd (saved passwords), tools"},
	 NULL},
	{{".bitcoin", R | W, H, "Bitcoin Core wallets, RPC password and cookie"}, NULL},
	{{".litecoin", R | W, H, "Litecoin Core wallets"}, NULL},
	{{".electrum", R | W, H, "Electrum wallets"}, NULL},
	{{".ethereum/keystore", R | W, H, "Ethereum (geth) account keys"}, NULL},
	{{".foundry/keystores", R | W, H, "Foundry (cast wallet) account keys"}, NULL},
	{{".config/solana", R | W, H, "Solana CLI keypair (id.json)"}, NULL},
	{{".config/Exodus", R | W, H, "Exodus wallet"}, NULL},
	{{".config/Ledger Live", R | W, H, "Ledger Live accounts"}, NULL},
	{{".sparrow", R | W, H, "Sparrow wallets"}, NULL},
	{{".walletwasabi", R | W, H, "Wasabi wallets"}, NULL},
	{{"Monero/wallets", R | W, H, "Monero wallets"}, NULL},
	{{".local/share/chezmoi", R | W, H, "chezmoi source: private_ copies of keys; run_ scripts"},
	 NULL},
	{{".config/chezmoi", R | W, H, "chezmoi config: template data (tokens); hooks run commands"},
	 NULL},
	/* Per-application homes: a snap's HOME is ~/snap/APP/REV (and
	 * ~/snap/APP/common), a flatpak's data is ~/.var/app/ID (config,
	 * data, cache, .mozilla), so every store of the table is there again
	 * under another root (Ubuntu's Firefox: ~/snap/firefox/common/.mozilla).
	 * Whole trees: a sandboxed command cannot start a snap or a flatpak
	 * (snap-confine is set-uid, flatpak needs bwrap's namespaces; both
	 * mount) and has no use for their data. */
	{{"snap", R | W, H, "snap apps' homes (~/snap/APP): Firefox, Chromium, snapped CLIs' stores"},
	 NULL},
	{{".var/app", R | W, H, "flatpak apps' homes (~/.var/app/ID): browsers', chat stores"},
	 NULL},
	/* Mail, chat, sync, transfer and remote-desktop clients (round 31
	 * of the attack read the first sixteen in a default run) */
	{{".msmtprc", R | W, H, "msmtp passwords; passwordeval runs a program"}, NULL},
	{{".config/msmtp", R | W, H, "msmtp passwords (XDG)"}, NULL},
	{{".muttrc", R | W, H, "mutt passwords; commands it runs"}, NULL},
	{{".mutt", R | W, H, "mutt passwords; commands it runs"}, NULL},
	{{".config/mutt", R | W, H, "mutt passwords (XDG)"}, NULL},
	{{".neomuttrc", R | W, H, "NeoMutt passwords; commands it runs"}, NULL},
	{{".config/neomutt", R | W, H, "NeoMutt passwords (XDG)"}, NULL},
	{{".fetchmailrc", R | W, H, "fetchmail passwords"}, "$FETCHMAILHOME/fetchmailrc"},
	{{".config/aerc", R | W, H, "aerc account passwords and commands"}, NULL},
	{{".purple", R | W, H, "Pidgin account passwords"}, NULL},
	{{".weechat", R | W, H, "WeeChat secured data"}, "$WEECHAT_HOME"},
	{{".config/weechat", R | W, H, "WeeChat secured data (XDG)"}, NULL},
	{{".irssi", R | W, H, "irssi server passwords"}, NULL},
	{{".config/hexchat", R | W, H, "HexChat server passwords"}, NULL},
	{{".local/share/TelegramDesktop", R | W, H, "Telegram Desktop session (the account)"}, NULL},
	{{".config/Signal", R | W, H, "Signal Desktop database key"}, NULL},
	{{".config/syncthing", R | W, H, "Syncthing device key and API key"}, NULL},
	{{".local/state/syncthing", R | W, H, "Syncthing device key and API key"}, NULL},
	{{".config/filezilla", R | W, H, "FileZilla saved server passwords"}, NULL},
	{{".filezilla", R | W, H, "FileZilla saved server passwords (old place)"}, NULL},
	{{".config/remmina", R | W, H, "Remmina saved passwords' key"}, NULL},
	{{".local/share/remmina", R | W, H, "Remmina saved connections"}, NULL},
	{{".cert", R | W, H, "NetworkManager VPN keys"}, NULL},
	/* Shell and REPL histories: typed passwords, tokens in commands */
	{{".bash_history", R | W, H, "bash history"}, "$HISTFILE"},
	{{".zsh_history", R | W, H, "zsh history"}, "$HISTFILE"},
	{{".zhistory", R | W, H, "zsh history (other name)"}, NULL},
	{{".histfile", R | W, H, "zsh history (zsh-newuser-install)"}, NULL},
	{{".sh_history", R | W, H, "ksh history"}, NULL},
	{{".local/share/fish/fish_history", R | W, H, "fish history"}, NULL},
	{{".psql_history", R | W, H, "psql history"}, "$PSQL_HISTORY"},
	{{".mysql_history", R | W, H, "mysql history"}, "$MYSQL_HISTFILE"},
	{{".python_history", R | W, H, "python REPL history"}, "$PYTHON_HISTORY"},
	{{".node_repl_history", R | W, H, "node REPL history"}, "$NODE_REPL_HISTORY"},
	{{".sqlite_history", R | W, H, "sqlite3 history"}, "$SQLITE_HISTORY"},
	{{".rediscli_history", R | W, H, "redis-cli history (AUTH commands)"}, "$REDISCLI_HISTFILE"},
	{{".dbshell", R | W, H, "mongo shell history"}, NULL},
	{{".mongosh", R | W, H, "mongosh history"}, NULL},
	{{".irb_history", R | W, H, "irb history"}, NULL},
	{{".lesshst", R | W, H, "less search history"}, "$LESSHISTFILE"},
	/* Round 39 of the attack: the rest of the category, editors'
	 * registers (a yanked token), shells', REPLs' and database
	 * clients' histories under names the rows missed */
	{{".viminfo", R | W, H, "vim registers and command history (yanked text)"}, NULL},
	{{".local/state/nvim/shada", R | W, H, "neovim registers and history (ShaDa)"}, NULL},
	{{".local/share/nvim/shada", R | W, H, "neovim registers and history (old place)"}, NULL},
	{{".bash_eternal_history", R | W, H, "bash history (a common HISTFILE)"}, NULL},
	{{".config/nushell/history.txt", R | W, H, "nushell history"}, NULL},
	{{".config/nushell/history.sqlite3", R | W, H, "nushell history"}, NULL},
	{{".local/share/nushell/history.txt", R | W, H, "nushell history"}, NULL},
	{{".local/share/nushell/history.sqlite3", R | W, H, "nushell history"}, NULL},
	{{".local/share/xonsh", R | W, H, "xonsh history"}, "$XONSH_DATA_DIR"},
	{{".local/state/elvish", R | W, H, "elvish history database"}, NULL},
	{{".elvish/db", R | W, H, "elvish history database (old place)"}, NULL},
	{{".histdb", R | W, H, "zsh-histdb history database"}, NULL},
	{{".local/share/mcfly", R | W, H, "mcfly history database"}, NULL},
	{{".ipython/profile_default/history.sqlite", R | W, H, "IPython history"}, NULL},
	{{".pry_history", R | W, H, "pry history"}, NULL},
	{{".local/share/pry/pry_history", R | W, H, "pry history (XDG)"}, NULL},
	{{".ghc/ghci_history", R | W, H, "ghci history"}, NULL},
	{{".julia/logs/repl_history.jl", R | W, H, "Julia REPL history"}, NULL},
	{{".ts_node_repl_history", R | W, H, "ts-node REPL history"}, "$TS_NODE_HISTORY"},
	{{".cache/deno/deno_history.txt", R | W, H, "deno REPL history"}, NULL},
	{{".scala_history", R | W, H, "scala REPL history"}, NULL},
	{{".octave_hist", R | W, H, "Octave history"}, NULL},
	{{".gdb_history", R | W, H, "gdb history (started in HOME)"}, NULL},
	{{".Rhistory", R | W, H, "R history (started in HOME)"}, NULL},
	{{".config/pgcli/history", R | W, H, "pgcli history (connection strings)"}, NULL},
	{{".mycli-history", R | W, H, "mycli history"}, NULL},
	{{".config/litecli/history", R | W, H, "litecli history"}, NULL},
	{{".clickhouse-client-history", R | W, H, "clickhouse-client history"}, NULL},
	{{".cassandra/cqlsh_history", R | W, H, "cqlsh history"}, NULL},
	{{".influx_history", R | W, H, "influx CLI history"}, NULL},
	{{".duckdb_history", R | W, H, "duckdb history"}, NULL},
	{{".usql_history", R | W, H, "usql history (connection URLs)"}, NULL},
	/* Round 37 of the attack (family: a copy of the home that the file
	 * system keeps beside it, every store of it readable at another
	 * path): ZFS's snapshot directory at a dataset's top (hidden from
	 * listings, there by name), a NetApp or other filer's .snapshot
	 * (an NFS or SMB home), snapper's .snapshots when the home is a
	 * btrfs subvolume of its own. Their twins at the system's places
	 * are host rows below; the top of every ZFS, btrfs, NFS and SMB
	 * mount is policy_host's snapshot_dirs (proxy/cli/setup.c). */
	{{".zfs", R | W, H, "ZFS snapshots of the home: every store in it at another path"}, NULL},
	{{".snapshot", R | W, H, "a filer's snapshots of the home (NFS, SMB): every store again"}, NULL},
	{{".snapshots", R | W, H, "snapper's btrfs snapshots of the home: every store again"}, NULL},
	{{".config/.snapshot", R | W, H, "a filer's snapshots of ~/.config (there in every directory)"},
	 NULL},

	/* The host's own secrets: files only root may read. */
	{{"/etc/shadow", R | W, Y, "password hashes"}, NULL},
	{{"/etc/shadow-", R | W, Y, "password hashes (backup)"}, NULL},
	{{"/etc/gshadow", R | W, Y, "group password hashes"}, NULL},
	{{"/etc/gshadow-", R | W, Y, "group password hashes (backup)"}, NULL},
	{{"/etc/security/opasswd", R | W, Y, "old password hashes"}, NULL},
	{{"/var/backups/shadow.bak", R | W, Y, "password hashes (backup)"}, NULL},
	{{"/var/backups/gshadow.bak", R | W, Y, "group password hashes (backup)"}, NULL},
	{{"/etc/ssh/ssh_host_rsa_key", R | W, Y, "ssh host key"}, NULL},
	{{"/etc/ssh/ssh_host_ecdsa_key", R | W, Y, "ssh host key"}, NULL},
	{{"/etc/ssh/ssh_host_ed25519_key", R | W, Y, "ssh host key"}, NULL},
	{{"/etc/ssh/ssh_host_dsa_key", R | W, Y, "ssh host key"}, NULL},
	{{"/etc/ssl/private", R | W, Y, "TLS private keys"}, NULL},
	{{"/etc/pki/tls/private", R | W, Y, "TLS private keys"}, NULL},
	{{"/etc/letsencrypt", R | W, Y, "certbot keys and account"}, NULL},
	{{"/etc/krb5.keytab", R | W, Y, "Kerberos host keys"}, NULL},
	{{"/etc/sssd", R | W, Y, "SSSD directory bind passwords"}, NULL},
	{{"/var/lib/sss", R | W, Y, "SSSD cached credentials"}, NULL},
	{{"/var/lib/samba/private", R | W, Y, "Samba password database"}, NULL},
	{{"/etc/ipsec.secrets", R | W, Y, "IPsec keys"}, NULL},
	{{"/etc/ppp/chap-secrets", R | W, Y, "PPP passwords"}, NULL},
	{{"/etc/ppp/pap-secrets", R | W, Y, "PPP passwords"}, NULL},
	{{"/etc/NetworkManager/system-connections", R | W, Y, "Wi-Fi and VPN passwords"}, NULL},
	{{"/etc/wpa_supplicant", R | W, Y, "Wi-Fi passwords"}, NULL},
	{{"/etc/wireguard", R | W, Y, "WireGuard keys"}, NULL},
	{{"/etc/openvpn", R | W, Y, "OpenVPN keys"}, NULL},
	{{"/etc/mysql/debian.cnf", R | W, Y, "MySQL maintenance password"}, NULL},
	/* Round 43: the rest of the family the VPN and dial-up rows began:
	 * what a supplementary group reads (Ubuntu's first user is in dip:
	 * /etc/ppp/peers and /etc/chatscripts are root:dip 2750, their
	 * files 0640), what Debian leaves world-readable (ifupdown's
	 * wpa-psk lines in /etc/network/interfaces, 0644), and the rest
	 * root's (a root-run sandbox maps root to root). */
	{{"/etc/ppp/peers", R | W, Y, "PPP peers: user and password lines (group dip reads them)"}, NULL},
	{{"/etc/chatscripts", R | W, Y, "PPP chat scripts: SIM PINs, logins (group dip reads them)"}, NULL},
	{{"/etc/ppp/srp-secrets", R | W, Y, "PPP SRP passwords"}, NULL},
	{{"/etc/ppp/eaptls-client", R | W, Y, "PPP EAP-TLS client keys"}, NULL},
	{{"/etc/ppp/eaptls-server", R | W, Y, "PPP EAP-TLS server keys"}, NULL},
	{{"/etc/xl2tpd/l2tp-secrets", R | W, Y, "L2TP tunnel secrets"}, NULL},
	{{"/etc/vpnc", R | W, Y, "vpnc group and user passwords"}, NULL},
	{{"/etc/swanctl", R | W, Y, "strongSwan private keys and secrets"}, NULL},
	{{"/etc/ipsec.d/private", R | W, Y, "IPsec private keys"}, NULL},
	{{"/etc/wpa_supplicant.conf", R | W, Y, "Wi-Fi passwords (the old place)"}, NULL},
	{{"/etc/network/interfaces", R | W, Y, "ifupdown: wpa-psk Wi-Fi passwords (world-readable on Debian)"},
	 NULL},
	{{"/etc/network/interfaces.d", R | W, Y, "ifupdown: wpa-psk Wi-Fi passwords"}, NULL},
	{{"/etc/iscsi/iscsid.conf", R | W, Y, "iSCSI CHAP passwords"}, NULL},
	{{"/etc/ddclient.conf", R | W, Y, "dynamic DNS password"}, NULL},
	{{"/etc/ssmtp/ssmtp.conf", R | W, Y, "mail relay password (group mail reads it)"}, NULL},
	{{"/etc/msmtprc", R | W, Y, "system msmtp: mail relay password"}, NULL},
	{{"/etc/mail/authinfo", R | W, Y, "sendmail relay password"}, NULL},
	/* review43f: the rest of the family: systemd-networkd's WireGuard
	 * and other keys (PrivateKey= in a .netdev, root:systemd-network
	 * 0640), OpenFortiVPN's password, the small mail relays' passwords. */
	{{"/etc/systemd/network", R | W, Y, "systemd-networkd: WireGuard private keys (.netdev)"}, NULL},
	{{"/etc/openfortivpn", R | W, Y, "OpenFortiVPN password"}, NULL},
	{{"/etc/nullmailer/remotes", R | W, Y, "nullmailer relay password"}, NULL},
	{{"/etc/dma/auth.conf", R | W, Y, "dma relay password"}, NULL},
	/* LXD and Incus: server keys, every container's root file system
	 * and its secrets, the trust database; the socket of group lxd or
	 * incus-admin is root on the host. */
	{{"/var/lib/lxd", R | W, Y, "LXD server key, containers and their secrets"}, NULL},
	{{"/var/snap/lxd/common/lxd", R | W, Y, "LXD (snap) server key, containers and their secrets"}, NULL},
	{{"/var/lib/incus", R | W, Y, "Incus server key, containers and their secrets"}, NULL},
	{{"/var/lib/lxc", R | W, Y, "LXC containers' root file systems"}, NULL},
	/* CUPS: printers' device URIs with passwords, its TLS keys, the
	 * queued documents. */
	{{"/etc/cups/printers.conf", R | W, Y, "CUPS device URIs (printer passwords)"}, NULL},
	{{"/etc/cups/classes.conf", R | W, Y, "CUPS classes"}, NULL},
	{{"/etc/cups/ssl", R | W, Y, "CUPS TLS keys"}, NULL},
	{{"/var/spool/cups", R | W, Y, "CUPS queued documents"}, NULL},

	{{"/etc/credstore", R | W, Y, "systemd credentials"}, NULL},
	{{"/etc/credstore.encrypted", R | W, Y, "systemd credentials"}, NULL},
	{{"/var/lib/systemd/credential.secret", R | W, Y, "systemd credential key"}, NULL},
	{{"/etc/kubernetes", R | W, Y, "Kubernetes admin kubeconfig and CA keys"}, NULL},
	{{"/var/lib/kubelet/pki", R | W, Y, "kubelet keys"}, NULL},
	{{"/etc/rancher", R | W, Y, "k3s/RKE2 admin kubeconfig"}, NULL},
	{{"/var/lib/rancher", R | W, Y, "k3s/RKE2 server token and keys"}, NULL},
	{{"/etc/gitlab-runner", R | W, Y, "GitLab runner tokens"}, NULL},
	{{"/etc/buildkite-agent", R | W, Y, "Buildkite agent token"}, NULL},
	{{"/var/lib/docker", R | W, Y, "Docker's containers and their secrets"}, NULL},
	{{"/var/lib/containers", R | W, Y, "podman's containers (root)"}, NULL},
	/* Round 7 of the attack: more that only root reads (a root-run
	 * sandbox keeps uid 0, which owns them; docs/sandbox.md). */
	{{"/var/cache/debconf/passwords.dat", R | W, Y, "debconf's password answers"}, NULL},
	/* Round 42 of the attack: the logs whole, not btmp, auth.log,
	 * secure and the journal by name (the rows of round 7). An
	 * ordinary user reads most of them through a supplementary group
	 * (adm: Ubuntu puts its first user in it; the setgroups that would
	 * drop it is denied in an unprivileged user namespace), and what
	 * services print there (sudo's command lines, cloud-init's output,
	 * a database's failed statements, a web server's query strings)
	 * is a name the list would never end with. */
	{{"/var/log", R | W, Y, "the host's logs: what services print and commands typed (group adm reads most)"},
	 NULL},
	{{"/var/lib/private", R | W, Y, "systemd DynamicUser services' state"}, NULL},
	{{"/var/lib/cloud", R | W, Y, "cloud-init user data (often secrets)"}, NULL},
	{{"/etc/cloud", R | W, Y, "cloud-init configuration"}, NULL},
	{{"/etc/netplan", R | W, Y, "netplan: Wi-Fi and VPN passwords"}, NULL},
	{{"/var/lib/iwd", R | W, Y, "iwd: Wi-Fi passwords"}, NULL},
	{{"/var/lib/NetworkManager", R | W, Y, "NetworkManager state and secrets"}, NULL},
	{{"/etc/postfix/sasl_passwd", R | W, Y, "mail relay password"}, NULL},
	{{"/etc/postfix/sasl_passwd.db", R | W, Y, "mail relay password"}, NULL},
	{{"/var/lib/tailscale", R | W, Y, "Tailscale node key"}, NULL},
	{{"/var/lib/zerotier-one", R | W, Y, "ZeroTier identity"}, NULL},
	{{"/var/spool/cron", R | W, Y, "users' crontabs"}, NULL},
	/* Round 42 of the attack: what the host keeps of crashed
	 * processes, the memory of each (an agent's, a password
	 * manager's, a shell's environment), and the user's own readable
	 * to an ordinary user: systemd-coredump adds an ACL for the
	 * crashed process's uid, apport writes the user's .crash and core
	 * files as the user's. And the local mail spool, where cron mails
	 * what jobs print. */
	{{"/var/lib/systemd/coredump", R | W, Y, "core dumps: crashed processes' memory (each user reads theirs)"},
	 NULL},
	{{"/var/crash", R | W, Y, "apport crash reports with their core dumps (each user reads theirs)"}, NULL},
	{{"/var/lib/apport/coredump", R | W, Y, "apport core dumps (each user reads theirs)"}, NULL},
	{{"/var/spool/abrt", R | W, Y, "ABRT problem reports with their core dumps"}, NULL},
	{{"/var/lib/systemd/pstore", R | W, Y, "kernel crash logs archived from pstore"}, NULL},
	{{"/var/mail", R | W, Y, "local mailboxes: what cron jobs print, system mail"}, NULL},
	{{"/var/spool/mail", R | W, Y, "local mailboxes (the other place)"}, NULL},
	{{"/etc/restic", R | W, Y, "backup repository passwords"}, NULL},
	{{"/etc/davfs2/secrets", R | W, Y, "WebDAV passwords"}, NULL},
	{{"/etc/fetchmailrc", R | W, Y, "mail passwords"}, NULL},
	{{"/etc/nut/upsd.users", R | W, Y, "UPS passwords"}, NULL},
	{{"/var/lib/postgresql", R | W, Y, "PostgreSQL data"}, NULL},
	{{"/var/lib/mysql", R | W, Y, "MySQL/MariaDB data"}, NULL},
	{{"/var/lib/redis", R | W, Y, "Redis data"}, NULL},
	{{"/var/lib/libvirt", R | W, Y, "virtual machines' disks and secrets"}, NULL},
	{{"/etc/libvirt/secrets", R | W, Y, "libvirt secrets"}, NULL},
	{{"/var/lib/bluetooth", R | W, Y, "Bluetooth pairing keys"}, NULL},
	/* Round 32 of the attack: services' own secret stores (a root
	 * session read GitLab's secrets, Jenkins' master key, BIND's rndc
	 * key, a Ceph admin keyring, the LDAP bind password, nginx's TLS
	 * keys, Proxmox's private directory): by service, with the
	 * neighbours of each kind (orchestration, configuration management,
	 * web servers' key directories, time and mail). */
	{{"/etc/gitlab", R | W, Y, "GitLab secrets (gitlab-secrets.json), passwords, TLS keys"}, NULL},
	{{"/var/opt/gitlab/gitlab-rails/etc", R | W, Y, "GitLab secrets.yml and database password"},
	 NULL},
	/* Jenkins' own files, not its home: jobs run there (HOME and the
	 * working directory of a passavant a job starts). */
	{{"/var/lib/jenkins/secrets", R | W, Y, "Jenkins master key and secrets"}, NULL},
	{{"/var/lib/jenkins/secret.key", R | W, Y, "Jenkins instance key"}, NULL},
	{{"/var/lib/jenkins/credentials.xml", R | W, Y, "Jenkins stored credentials"}, NULL},
	{{"/var/lib/jenkins/identity.key.enc", R | W, Y, "Jenkins instance identity key"}, NULL},
	{{"/etc/bind/rndc.key", R | W, Y, "BIND control key"}, NULL},
	{{"/etc/rndc.key", R | W, Y, "BIND control key"}, NULL},
	{{"/etc/ceph", R | W, Y, "Ceph keyrings (client.admin)"}, NULL},
	{{"/var/lib/ceph", R | W, Y, "Ceph daemons' keyrings"}, NULL},
	{{"/etc/ldap.secret", R | W, Y, "LDAP root bind password (pam_ldap, libnss-ldap)"}, NULL},
	{{"/etc/pam_ldap.secret", R | W, Y, "LDAP root bind password"}, NULL},
	{{"/etc/libnss-ldap.secret", R | W, Y, "LDAP root bind password"}, NULL},
	{{"/etc/nslcd.conf", R | W, Y, "nslcd's LDAP bind password"}, NULL},
	{{"/etc/chrony/chrony.keys", R | W, Y, "NTP authentication keys"}, NULL},
	{{"/etc/chrony.keys", R | W, Y, "NTP authentication keys"}, NULL},
	{{"/etc/nginx/ssl", R | W, Y, "nginx TLS private keys"}, NULL},
	{{"/etc/apache2/ssl", R | W, Y, "Apache TLS private keys"}, NULL},
	{{"/etc/haproxy/certs", R | W, Y, "HAProxy certificates with their keys"}, NULL},
	{{"/etc/vault.d", R | W, Y, "Vault server configuration: seal and storage secrets"}, NULL},
	{{"/etc/consul.d", R | W, Y, "Consul gossip key and ACL tokens"}, NULL},
	{{"/etc/nomad.d", R | W, Y, "Nomad gossip key and ACL tokens"}, NULL},
	{{"/etc/grafana", R | W, Y, "Grafana admin password and secret key"}, NULL},
	{{"/var/lib/grafana", R | W, Y, "Grafana database: data source passwords"}, NULL},
	{{"/etc/exim4/passwd.client", R | W, Y, "mail relay password"}, NULL},
	{{"/etc/dovecot/private", R | W, Y, "Dovecot TLS private key"}, NULL},
	{{"/etc/pve/priv", R | W, Y, "Proxmox VE private keys and tokens"}, NULL},
	{{"/etc/pve/local/pve-ssl.key", R | W, Y, "Proxmox VE TLS key"}, NULL},
	{{"/etc/salt/pki", R | W, Y, "Salt master and minion keys"}, NULL},
	{{"/etc/puppetlabs/puppet/ssl", R | W, Y, "Puppet agent and CA keys"}, NULL},
	{{"/var/lib/puppet/ssl", R | W, Y, "Puppet agent and CA keys (old place)"}, NULL},
	{{"/etc/docker/certs.d", R | W, Y, "Docker registries' client keys"}, NULL},
	{{"/var/lib/acme", R | W, Y, "ACME (lego, NixOS) account and certificate keys"}, NULL},
	/* Round 37 of the attack: the file systems' copies of every home
	 * and of /etc (the rows above at another path): snapper's btrfs
	 * snapshots of / and /home, ZFS's of datasets mounted there,
	 * a filer's of a /home on NFS, Timeshift's (rsync mode). */
	{{"/.snapshots", R | W, Y, "snapper's snapshots of /: /etc/shadow, /root and every home again"},
	 NULL},
	{{"/home/.snapshots", R | W, Y, "snapper's snapshots of /home: every store again"}, NULL},
	{{"/.zfs", R | W, Y, "ZFS snapshots of /: every secret again"}, NULL},
	{{"/home/.zfs", R | W, Y, "ZFS snapshots of /home: every store again"}, NULL},
	{{"/home/.snapshot", R | W, Y, "a filer's snapshots of /home (NFS): every store again"}, NULL},
	{{"/timeshift", R | W, Y, "Timeshift's snapshots (rsync mode): every home and secret again"},
	 NULL},
};

/* The rest: denied for writing only (SPEC §3.3). */
static const struct policy_mandatory mandatory[] = {
	/* Shell start-up and logout files (bash, zsh, fish, sh, ksh, csh). */
	{".bashrc", W, H, "bash start-up"},
	{".bash_profile", W, H, "bash login start-up"},
	{".bash_login", W, H, "bash login start-up"},
	{".bash_logout", W, H, "bash logout"},
	{".bash_aliases", W, H, "sourced by the usual .bashrc"},
	{".profile", W, H, "sh/bash/dash login start-up"},
	{".inputrc", W, H, "readline: key bindings type commands"},
	{".bash_completion", W, H, "sourced by bash-completion in every interactive bash"},
	{".local/share/bash-completion", W, H, "bash-completion loads these on demand"},
	{".zshenv", W, H, "zsh start-up (every zsh)"},
	{".zshrc", W, H, "zsh start-up"},
	{".zprofile", W, H, "zsh login start-up"},
	{".zlogin", W, H, "zsh login start-up"},
	{".zlogout", W, H, "zsh logout"},
	{".config/fish", W, H, "fish: config.fish, conf.d, functions"},
	{".kshrc", W, H, "ksh start-up"},
	{".mkshrc", W, H, "mksh start-up"},
	{".shrc", W, H, "sh start-up (via $ENV)"},
	{".cshrc", W, H, "csh start-up"},
	{".tcshrc", W, H, "tcsh start-up"},
	{".login", W, H, "csh login start-up"},
	{".logout", W, H, "csh logout"},
	/* Session start-up: X, PAM and systemd environments, autostart. */
	{".xprofile", W, H, "X session start-up"},
	{".xsession", W, H, "X session start-up"},
	{".xsessionrc", W, H, "X session start-up"},
	{".xinitrc", W, H, "startx start-up"},
	{".pam_environment", W, H, "login environment (LD_PRELOAD...)"},
	{".config/environment.d", W, H, "systemd user environment"},
	{".config/autostart", W, H, "desktop autostart entries"},
	{".local/share/dbus-1/services", W, H, "D-Bus session activation runs their Exec="},
	{".config/systemd", W, H, "systemd user units"},
	{".local/share/systemd", W, H, "systemd user units"},
	{".local/share/applications", W, H, "desktop entries: Exec= runs on xdg-open and menus"},
	{".config/plasma-workspace/env", W, H, "KDE: scripts sourced at login"},
	{".mailcap", W, H, "programs run per MIME type (mailers, run-mailcap)"},
	/* Code other programs load from HOME. */
	{".gitconfig", W, H, "git global config (fsmonitor, hooksPath, aliases)"},
	{".config/git", W, H, "git global config, attributes, hooks (XDG)"},
	{".local/lib", W, H, "pip --user packages: a .pth file runs at every python start"},
	{".cargo/config.toml", W, H, "cargo config: runners and rustc wrappers"},
	{".cargo/config", W, H, "cargo config (old name)"},
	/* Round 42 of the attack: package runners' install trees, run as
	 * they are found at the next call, nothing of them checked again
	 * (an agent's MCP server configured as `npx -y PKG` runs at every
	 * start of the agent). A policy that makes the tool's cache
	 * writable (examples/npm.yaml: allowWrite ~/.npm) still keeps
	 * these read-only. */
	{".npm/_npx", W, H | Z, "npx's installed packages: the next npx PKG runs what is there"},
	{".cache/pnpm/dlx", W, H | Z, "pnpm dlx's installed packages: the next pnpm dlx PKG runs what is there"},
	/* Round 43: the same family, the other tools' trees of programs
	 * the host runs later from PATH or a shim, read-only also where a
	 * policy hands the tool's home around them over (allowWrite
	 * ["~/.local/share"], ["~/.bun"]; ~/go/bin since round 44, below);
	 * corepack's cache is a runner's tree (the package manager it
	 * downloaded runs as found): the session's own, as npx's. */
	{".cache/node/corepack", W, H | Z, "corepack's package managers: the next pnpm or yarn runs what is there"},
	{".local/share/uv/tools", W, H, "uv tool install's environments (their programs are on PATH)"},
	{".local/pipx", W, H, "pipx's environments (their programs are on PATH)"},
	{".local/share/pipx", W, H, "pipx's environments (their programs are on PATH)"},
	{".bun/bin", W, H, "bun's global programs (on PATH)"},
	{".bun/install/global", W, H, "bun's global packages (their programs are on PATH)"},
	{".deno/bin", W, H, "deno install's programs (on PATH)"},
	{".volta", W, H | T, "Volta's shims and tools (on PATH)"},
	{".asdf", W, H | T, "asdf's shims, plugins (scripts) and tools (on PATH)"},
	{".local/share/mise", W, H, "mise's shims, plugins (scripts) and tools (on PATH)"},
	{".nvm", W, H | T, "nvm: nvm.sh is sourced by ~/.bashrc; its Node versions are on PATH"},
	{".local/share/fnm", W, H, "fnm's Node versions (on PATH)"},
	{".fnm", W, H | T, "fnm's Node versions (old place, on PATH)"},
	{".local/share/gem", W, H, "gem install --user-install's gems and programs (on PATH)"},
	{".gem/ruby", W, H, "gem install --user-install's gems and programs (old place)"},
	{".smartcd", W, H | T, "smartcd's scripts run on cd"},
	{".config/passavant", W, H, "where the policy lookup finds the next policy"},
	{".config/direnv", W, H, "direnvrc runs at every prompt; direnv.toml can trust any .envrc"},
	{".direnvrc", W, H, "direnv: runs at every prompt"},
	{".vimrc", W, H | S, "vim start-up (runs commands); a project's is read with 'exrc'"},
	{".lvimrc", W, S, "vim's localvimrc plugin sources it in the directory's buffers"},
	/* review43f: the other local-vimrc plugins' names (thinca's
	 * vim-localrc sources it without asking; LucHermitte's local_vimrc). */
	{".local.vimrc", W, S, "vim-localrc sources it in the directory's buffers (no prompt)"},
	{"_vimrc_local.vim", W, S, "local_vimrc sources it in the directory's buffers"},
	{".gvimrc", W, H | S, "gvim start-up (runs commands); a project's is read with 'exrc'"},
	{"_vimrc", W, S, "vim (exrc) start-up, other spelling"},
	{"_exrc", W, S, "vi and vim (exrc) start-up, other spelling"},
	{".vim", W, H | T, "vim plugins and start-up"},
	{".config/nvim", W, H, "neovim start-up and plugins"},
	{".emacs", W, H, "emacs start-up (Lisp)"},
	{".emacs.d", W, H | T, "emacs start-up (Lisp)"},
	{".config/emacs", W, H, "emacs start-up (Lisp, XDG)"},
	{".tmux.conf", W, H, "tmux: run-shell, if-shell"},
	{".config/tmux", W, H, "tmux: run-shell, if-shell (XDG)"},
	{".gdbinit", W, H | S, "gdb start-up (shell commands, python); a project's where auto-load allows"},
	/* Directories a stock ~/.profile puts on PATH once they exist, and
	 * what it sources (not on PATH when `run` starts, so the PATH rule
	 * does not see them). */
	{"bin", W, H, "~/.profile adds it to PATH once it exists"},
	{".local/bin", W, H, "~/.profile adds it to PATH once it exists"},
	{".cargo/bin", W, H, "rustup puts it on PATH"},
	/* Round 44: go install's programs, on PATH by the usual setup;
	 * only where ~/go exists (D): its placeholder would be ~/go, which
	 * go must make in a writable home (a new ~/go is moved aside after
	 * the run, ~/go/bin with it) */
	{"go/bin", W, H | D, "go install's programs (on PATH)"},
	/* Round 45 (fix45v): go's environment file (`go env -w`, read by
	 * every go: GOFLAGS=-toolexec= runs a program at every build,
	 * GOTOOLCHAIN picks the go that runs; $GOENV names it elsewhere,
	 * base/envnames.c) and opam's root (the switches' bin/ is on PATH
	 * by `eval $(opam env)`, their packages' libraries load, opam's
	 * config runs hooks; $OPAMROOT) */
	{".config/go/env", W, H, "go env -w's settings: GOFLAGS=-toolexec runs a program at every go build"},
	{".opam", W, H | T, "opam's switches (their bin/ is on PATH), hooks and plugins"},
	{".cargo/env", W, H, "sourced by ~/.profile and ~/.bashrc (rustup)"},
	{".cargo/env.fish", W, H, "sourced by fish (rustup)"},
	{".bashrc.d", W, H | T, "sourced by the usual .bashrc"},
	{".oh-my-zsh", W, H | T, "oh-my-zsh: custom plugins and themes run in every zsh"},
	{".zsh", W, H | T, "zsh plugins and functions"},
	{".config/zsh", W, H, "zsh start-up (ZDOTDIR)"},
	/* Editors. */
	{".exrc", W, H | S, "vi and neovim (exrc) start-up"},
	{".nvimrc", W, H | S, "neovim (exrc) start-up"},
	{".nvim.lua", W, S, "neovim (exrc) start-up"},
	{".local/share/nvim/site", W, H, "neovim plugins loaded at start"},
	{".emacs.el", W, H, "emacs start-up (Lisp)"},
	{".spacemacs", W, H, "emacs start-up (Lisp)"},
	{".doom.d", W, H | T, "emacs start-up (Lisp)"},
	{".config/doom", W, H, "emacs start-up (Lisp)"},
	{".config/VSCodium/User", W, H, "VSCodium user settings and tasks"},
	{".config/Windsurf/User", W, H, "Windsurf user settings and tasks"},
	{".vscode-server/data/Machine", W, H, "VS Code remote machine settings"},
	{".vscode-server/extensions", W, H, "VS Code remote extensions"},
	{".config/helix", W, H, "Helix language server commands"},
	{".helix", W, S, "Helix language server commands"},
	{".theia", W, S, "Theia tasks"},
	{".config/lazygit", W, H, "lazygit custom commands"},
	{".config/jj", W, H, "Jujutsu user config and per-repository configs: aliases, pager, diff tools"},
	{".jjconfig.toml", W, H, "Jujutsu user config: aliases, pager, diff tools"},
	/* Language and tool start-up. */
	{".ipython", W, H | T, "IPython start-up scripts and config"},
	{".jupyter", W, H | T, "Jupyter config (Python)"},
	{".pythonrc.py", W, H, "python start-up"},
	{".pythonrc", W, H, "python start-up"},
	{".Rprofile", W, H | S, "R start-up (a project's replaces the home one)"},
	{".irbrc", W, H | S, "irb start-up (also read from the current directory)"},
	/* Round 16 of the attack: the other names irb and R read from the
	 * directory they start in. */
	{"_irbrc", W, S, "irb start-up, read from the current directory"},
	{"irb.rc", W, S, "irb start-up, read from the current directory"},
	{"$irbrc", W, S, "irb start-up, read from the current directory"},
	{".Renviron", W, H | S, "R start-up environment: R_PROFILE_USER names any file as R code"},
	{".RData", W, S | E, "R restores it at start-up, and runs a saved .First()"},
	{".pryrc", W, H | S, "pry start-up (also read from the current directory)"},
	{".pdbrc", W, H | S, "pdb start-up: ! lines run Python (also read from the current directory)"},
	{".perldb", W, H | S, "perl -d start-up: runs Perl (read from the current directory, then HOME)"},
	{".ghci", W, H | S, "GHCi start-up: :! runs commands (also read from the current directory)"},
	{".octaverc", W, H | S, "Octave start-up (also read from the current directory)"},
	/* Round 36 of the attack (f3): the same family in other REPLs. Never
	 * a placeholder (E): an existing one is read-only, one made in the
	 * session is moved aside after it (in a writable HOME, ~/.ocamlinit
	 * and ~/.iex.exs are the HOME class rule's). */
	{".ocamlinit", W, S | E, "OCaml toplevel and utop start-up (read from the current directory first)"},
	{".iex.exs", W, S | E, "Elixir IEx start-up (read from the current directory first)"},
	{".psysh.php", W, S | E, "PsySH (Laravel Tinker) start-up, read from the current directory"},
	/* Python's REPL imports these with the current directory first on
	 * sys.path: a module of that name there runs in every interactive
	 * python3 started in it (in HOME: every one a new terminal starts).
	 * Only the names Python imports; never a placeholder (E). */
	{"readline.py", W, S | E, "imported by every interactive python3 started in its directory"},
	{"rlcompleter.py", W, S | E, "imported by every interactive python3 started in its directory"},
	{"readline.pyc", W, S | E, "imported (sourceless) by every interactive python3 started there"},
	{"rlcompleter.pyc", W, S | E, "imported (sourceless) by every interactive python3 started there"},
	{"readline*.so", W, S, "a compiled readline module an interactive python3 imports"},
	{"rlcompleter*.so", W, S, "a compiled rlcompleter module an interactive python3 imports"},
	{"readline/__init__.py", W, S | D | E, "a readline package an interactive python3 imports"},
	{"rlcompleter/__init__.py", W, S | D | E, "an rlcompleter package an interactive python3 imports"},
	{"readline/__init__.pyc", W, S | D | E, "a readline package (sourceless) python3 imports"},
	{"rlcompleter/__init__.pyc", W, S | D | E, "an rlcompleter package (sourceless) python3 imports"},
	{"readline/__init__*.so", W, S | D, "a compiled readline package python3 imports"},
	{"rlcompleter/__init__*.so", W, S | D, "a compiled rlcompleter package python3 imports"},
	{".hgrc", W, H, "Mercurial hooks and extensions"},
	{".hg/hgrc", W, S | D, "Mercurial repository hooks and extensions (git's .git/config)"},
	/* Round 34 of the attack (d3): the repository config Mercurial 5.7
	 * and later reads on every command beside .hg/hgrc, in any
	 * repository (share-safe's "not for shares"). */
	{".hg/hgrc-not-shared", W, S | D, "Mercurial repository hooks and extensions, read beside .hg/hgrc"},
	/* Where Mercurial reads the repository (and its hgrc) from: a
	 * share's source (git's commondir). */
	{".hg/sharedpath", W, S | D, "Mercurial share source: its hgrc hooks run (git's commondir)"},
	{".gradle/init.d", W, H, "Gradle init scripts run in every build"},
	{".gradle/init.gradle", W, H, "Gradle init script run in every build"},
	{".gradle/init.gradle.kts", W, H, "Gradle init script run in every build"},
	{".psqlrc", W, H, "psql start-up (\\! runs commands)"},
	{".sqliterc", W, H, "sqlite3 start-up (.shell runs commands)"},
	{".lldbinit", W, H | S, "lldb start-up (a project's where target.load-cwd-lldbinit allows)"},
	{".screenrc", W, H, "screen start-up (runs commands)"},
	{".docker/cli-plugins", W, H, "docker CLI plugins (programs)"},
	{".config/starship.toml", W, H, "starship prompt custom commands"},
	{".config/mise", W, H | S | D, "mise tasks and hooks (run on cd in a project)"},
	{".config/i3", W, H, "i3: exec lines"},
	{".config/sway", W, H, "sway: exec lines"},
	{".config/hypr", W, H, "Hyprland: exec lines"},
	{".config/openbox", W, H, "Openbox autostart"},
	/* Agent and editor settings that run commands (in HOME and in every
	 * writable workspace). */
	{".claude/settings.json", W, H | S, "Claude Code hooks and permissions"},
	{".claude/settings.local.json", W, H | S, "Claude Code hooks and permissions"},
	{".claude/commands", W, H | S, "Claude Code commands"},
	{".claude/agents", W, H | S, "Claude Code agents"},
	{".claude/hooks", W, H | S, "Claude Code hook scripts"},
	{".claude/skills", W, H | S, "Claude Code skills (scripts)"},
	{".claude/plugins", W, H, "Claude Code plugins (hooks, MCP servers)"},
	{".claude.json", W, H, "Claude Code state: user MCP servers run commands"},
	{".cursor", W, H | S, "Cursor settings, rules and MCP servers"},
	{".vscode", W, H | S, "VS Code tasks, settings and extensions"},
	{".config/Code/User", W, H, "VS Code user settings and tasks"},
	{".config/Cursor/User", W, H, "Cursor user settings and tasks"},
	{".idea", W, S, "JetBrains run configurations and tools"},
	{".mcp.json", W, S, "project MCP servers run commands"},
	{".gemini/settings.json", W, H | S, "Gemini CLI MCP servers and tool commands"},
	{".codex/config.toml", W, H | S, "Codex CLI MCP servers and notify command"},
	{".gemini/commands", W, H | S, "Gemini CLI custom commands"},
	{".gemini/extensions", W, H | S, "Gemini CLI extensions (MCP servers)"},
	{".gemini/.env", W, H | S | D, "Gemini CLI environment (BASH_ENV, NODE_OPTIONS run code)"},
	{".kiro/settings", W, H | S, "Kiro MCP servers"},
	{".kiro/hooks", W, S, "Kiro agent hooks"},
	{".roo/mcp.json", W, S, "Roo Code MCP servers"},
	{".kilocode/mcp.json", W, S | D, "Kilo Code MCP servers"},
	{".junie/mcp", W, S | D, "Junie MCP servers"},
	{".amp/settings.json", W, S | D, "Amp workspace settings: MCP servers and permissions"},
	{".amazonq/mcp.json", W, S, "Amazon Q MCP servers"},
	/* Round 20 of the attack: hook files more agents run from the
	 * project, which no row named. .github and .clinerules are a
	 * project's own too (workflows; Cline's rules, once a file): at the
	 * top only where that directory exists (D), no placeholder making it
	 * read-only; a row made in the session moves aside after it. */
	{".github/hooks", W, S | D, "GitHub Copilot CLI hooks: every *.json there runs its commands"},
	{".copilot/hooks", W, H, "GitHub Copilot CLI personal hooks run commands"},
	{".copilot/mcp-config.json", W, H, "GitHub Copilot CLI MCP servers run commands"},
	/* Round 36 of the attack (f6): Copilot's custom agents (their
	 * mcp-servers start commands; the CLI's model may pick one by
	 * itself) and agent skills (scripts it runs), .claude/agents' and
	 * .claude/skills' twins. */
	{".github/agents", W, S | D, "GitHub Copilot custom agents: their MCP servers run commands"},
	{".github/skills", W, S | D, "GitHub Copilot agent skills (scripts the agent runs)"},
	{".copilot/agents", W, H, "GitHub Copilot CLI personal custom agents: MCP servers run commands"},
	{".copilot/skills", W, H, "GitHub Copilot CLI personal agent skills (scripts)"},
	/* The Agent Skills standard's own place, read by Codex (which may
	 * pick a skill by itself), Amp, Cursor and others, and Codex's. */
	{".agents/skills", W, H | S | D, "Agent Skills (the cross-agent place: Codex, Amp...): scripts the agent runs"},
	{".codex/skills", W, H | S, "Codex skills (scripts the agent runs)"},
	{".clinerules/hooks", W, S | D, "Cline hook scripts (run on task and tool events)"},
	{"Documents/Cline/Hooks", W, H, "Cline global hook scripts"},
	{".codex/hooks.json", W, H | S, "Codex CLI hooks run commands"},
	{".factory", W, S, "Factory Droid hooks, settings, MCP servers and droids"},
	{".factory/settings.json", W, H, "Factory Droid hooks and settings"},
	{".factory/hooks.json", W, H, "Factory Droid hooks"},
	{".factory/hooks", W, H, "Factory Droid hooks (old place)"},
	{".factory/mcp.json", W, H, "Factory Droid MCP servers"},
	{".augment", W, S, "Auggie hooks, MCP servers and settings"},
	{".augment/settings.json", W, H, "Auggie hooks and MCP servers"},
	{".kiro/agents", W, H | S, "Kiro CLI agents: hooks and MCP servers"},
	{".amazonq/cli-agents", W, S, "Amazon Q CLI agents: hooks and MCP servers"},
	{".qwen/settings.json", W, H, "Qwen Code MCP servers and tool commands"},
	{".codeium/windsurf/hooks.json", W, H, "Windsurf hooks run commands"},
	{".codeium/windsurf/mcp_config.json", W, H, "Windsurf MCP servers"},
	{".continue", W, S, "Continue MCP servers and commands (HOME's: a store row)"},
	{"opencode.json", W, S, "opencode MCP servers and commands"},
	{"opencode.jsonc", W, S, "opencode MCP servers and commands"},
	{".opencode", W, S, "opencode plugins and commands"},
	{".config/opencode", W, H, "opencode MCP servers, plugins and commands"},
	{"*.code-workspace", W, S, "VS Code workspace tasks and settings"},
	/* Hook managers: their configs are run by the hooks they install. */
	{".pre-commit-config.yaml", W, S, "pre-commit hook commands"},
	{".pre-commit-config.yml", W, S, "pre-commit hook commands"},
	{"lefthook.yml", W, S, "lefthook hook commands"},
	{"lefthook.yaml", W, S, "lefthook hook commands"},
	{".lefthook.yml", W, S, "lefthook hook commands"},
	{".lefthook.yaml", W, S, "lefthook hook commands"},
	{"lefthook-local.yml", W, S, "lefthook hook commands"},
	{".lefthook-local.yml", W, S, "lefthook hook commands"},
	{"lefthook.toml", W, S, "lefthook hook commands"},
	{".lefthook.toml", W, S, "lefthook hook commands"},
	{"lefthook.json", W, S, "lefthook hook commands"},
	{".lefthook.json", W, S, "lefthook hook commands"},
	{"lefthook-local.yaml", W, S, "lefthook hook commands"},
	{"lefthook-local.toml", W, S, "lefthook hook commands"},
	{"lefthook-local.json", W, S, "lefthook hook commands"},
	/* lefthook reads lefthook, .lefthook, .config/lefthook and their
	 * -local twins, each as .yml, .yaml, .json, .jsonc or .toml (round
	 * 15 of the attack: .lefthook-local.yaml and the .jsonc names were
	 * on no row). Names, not `lefthook.*`: that pattern matched a
	 * project's lefthook.go or lefthook.md in any directory (review). */
	{".lefthook-local.yaml", W, S, "lefthook hook commands"},
	{".lefthook-local.toml", W, S, "lefthook hook commands"},
	{".lefthook-local.json", W, S, "lefthook hook commands"},
	{"lefthook.jsonc", W, S, "lefthook hook commands"},
	{".lefthook.jsonc", W, S, "lefthook hook commands"},
	{"lefthook-local.jsonc", W, S, "lefthook hook commands"},
	{".lefthook-local.jsonc", W, S, "lefthook hook commands"},
	{".config/lefthook.*", W, S | D, "lefthook hook commands"},
	{".config/lefthook-local.*", W, S | D, "lefthook hook commands"},
	{".lefthook", W, S, "lefthook hook scripts"},
	{".lefthook-local", W, S, "lefthook local hook scripts"},
	{".husky", W, S, "husky hook scripts"},
	{".huskyrc", W, S, "husky 4 hook commands"},
	{".huskyrc.json", W, S, "husky 4 hook commands"},
	{".huskyrc.js", W, S, "husky 4 hook commands"},
	{".huskyrc.cjs", W, S, "husky 4 hook commands"},
	{".huskyrc.yaml", W, S, "husky 4 hook commands"},
	{".huskyrc.yml", W, S, "husky 4 hook commands"},
	{"husky.config.js", W, S, "husky 4 hook commands"},
	{"husky.config.cjs", W, S, "husky 4 hook commands"},
	/* What the hooks run: lint-staged's and nano-staged's command
	 * lists, commitlint's config (JavaScript, plugins). */
	{".lintstagedrc", W, S, "lint-staged commands run by the pre-commit hook"},
	{".lintstagedrc.*", W, S, "lint-staged commands run by the pre-commit hook"},
	{"lint-staged.config.*", W, S, "lint-staged commands run by the pre-commit hook"},
	{".nano-staged.*", W, S, "nano-staged commands run by the pre-commit hook"},
	{"nano-staged.*", W, S, "nano-staged commands run by the pre-commit hook"},
	{".nanostagedrc", W, S, "nano-staged commands run by the pre-commit hook"},
	{".commitlintrc", W, S, "commitlint config run by the commit-msg hook"},
	{".commitlintrc.*", W, S, "commitlint config run by the commit-msg hook"},
	{"commitlint.config.*", W, S, "commitlint config (code) run by the commit-msg hook"},
	{".simple-git-hooks.json", W, S, "simple-git-hooks hook commands"},
	{".simple-git-hooks.js", W, S, "simple-git-hooks hook commands"},
	{".overcommit.yml", W, S, "overcommit hook commands"},
	/* Round 38 of the attack: the hook managers' family had more
	 * members, each config read at every commit by the hook its install
	 * wrote (the hook unchanged, read-only): PHP's CaptainHook and
	 * GrumPHP (a shell task), rusty-hook, jdx's hk, trunk's git-hook
	 * actions (and its git-ignored per-user overrides). Only where they
	 * exist (E, D): no placeholder; made in the session, moved aside. */
	{"captainhook.json", W, S | E, "CaptainHook hook actions (shell commands) run by its hooks"},
	{"grumphp.yml", W, S | E, "GrumPHP tasks (shell scripts) run by its pre-commit hook"},
	{"grumphp.yaml", W, S | E, "GrumPHP tasks (shell scripts) run by its pre-commit hook"},
	{"grumphp.yml.dist", W, S | E, "GrumPHP tasks (shell scripts) run by its pre-commit hook"},
	{"grumphp.yaml.dist", W, S | E, "GrumPHP tasks (shell scripts) run by its pre-commit hook"},
	{"grumphp.dist.yml", W, S | E, "GrumPHP tasks (shell scripts) run by its pre-commit hook"},
	{"grumphp.dist.yaml", W, S | E, "GrumPHP tasks (shell scripts) run by its pre-commit hook"},
	{".rusty-hook.toml", W, S | E, "rusty-hook hook commands"},
	{"rusty-hook.toml", W, S | E, "rusty-hook hook commands"},
	{"hk.pkl", W, S | E, "hk hook steps (commands) run by its hooks"},
	{"hk.local.pkl", W, S | E, "hk local hook steps (commands) run by its hooks"},
	{".trunk/trunk.yaml", W, S | D, "trunk git-hook actions (commands) run by its hooks"},
	{".trunk/user.yaml", W, S | D, "trunk per-user actions (commands) run by its hooks"},
	{".envrc", W, S, "direnv runs it on cd (once allowed)"},
	{"mise.toml", W, S, "mise hooks and tasks run on cd"},
	{".mise.toml", W, S, "mise hooks and tasks run on cd"},
	{"mise.local.toml", W, S, "mise hooks and tasks run on cd"},
	{".mise.local.toml", W, S, "mise hooks and tasks run on cd"},
	{"mise.*.toml", W, S, "mise per-environment config: hooks and tasks run on cd"},
	{".mise.*.toml", W, S, "mise per-environment config: hooks and tasks run on cd"},
	{".mise", W, S, "mise config and tasks: hooks run on cd"},
	{".tool-versions", W, H | S, "asdf and mise: a path: version puts a directory of it first on PATH"},
	{"rust-toolchain.toml", W, S, "rustup: a path toolchain runs its cargo and rustc (round 16)"},
	{"rust-toolchain", W, S, "rustup: a path toolchain runs its cargo and rustc (round 16)"},
	{"mise/config.toml", W, S | D, "mise hooks and tasks run on cd"},
	{"mise/config.local.toml", W, S | D, "mise hooks and tasks run on cd"},
	{"mise/config.*.toml", W, S | D, "mise per-environment config: hooks and tasks run on cd"},
	{"mise/conf.d", W, S | D, "mise config fragments: hooks and tasks run on cd"},
	{".config/mise.toml", W, S | D, "mise hooks and tasks run on cd"},
	{".config/mise.local.toml", W, S | D, "mise hooks and tasks run on cd"},
	{".config/mise.*.toml", W, S | D, "mise per-environment config: hooks and tasks run on cd"},
	{".rtx.toml", W, S, "rtx (mise's old name) hooks run on cd"},
	{".rtx.local.toml", W, S, "rtx (mise's old name) hooks run on cd"},
	{".rtx.*.toml", W, S, "rtx (mise's old name) per-environment config"},
	{".dir-locals.el", W, S, "Emacs directory variables (eval: forms)"},
	{".dir-locals-2.el", W, S, "Emacs directory variables (eval: forms)"},
	{".lazy.lua", W, S, "lazy.nvim loads it as code"},
	{".windsurf", W, S, "Windsurf MCP servers and workflows"},
	{".trae", W, S, "Trae MCP servers"},
	{".qwen", W, S, "Qwen Code settings, MCP servers and commands"},
	{".crush.json", W, S, "Crush MCP servers and commands"},
	{"crush.json", W, S, "Crush MCP servers and commands"},
	{".aider.conf.yml", W, S, "aider lint-cmd and test-cmd run after edits (HOME's: a store row)"},
	{".devcontainer", W, S, "dev container initializeCommand runs on the host"},
	{".devcontainer.json", W, S, "dev container initializeCommand runs on the host"},
	{".zed", W, S, "Zed tasks and language server commands"},
	{".config/zed", W, H, "Zed tasks and language server commands"},
	{".gitmodules", W, S, "submodule URLs and update commands"},
	{".lazygit.yml", W, S, "lazygit repository config: custom commands and pager"},
	{".jj/repo/config.toml", W, S | D | P, "Jujutsu repository config: aliases, pager and diff tools"},
	{".jj/workspace-config.toml", W, S | D, "Jujutsu workspace config: aliases, pager and diff tools"},
	{".envrc.local", W, S, "sourced by the usual .envrc (direnv source_env_if_exists)"},
	/* Round 36 of the attack. Each row is the member of a family above
	 * under another name; never a placeholder (E): an existing one is
	 * read-only, one made in the session (or a nested one changed) is
	 * moved aside after it. */
	/* f2: mise's idiomatic version files are read with .tool-versions'
	 * parser: "path:DIR" puts DIR/bin first on PATH on cd. */
	{".python-version", W, S | E, "mise (idiomatic version file): a path: version puts a directory on PATH"},
	{".python-versions", W, S | E, "mise (idiomatic version file): a path: version puts a directory on PATH"},
	{".nvmrc", W, S | E, "mise (idiomatic version file): a path: version puts a directory on PATH"},
	{".node-version", W, S | E, "mise (idiomatic version file): a path: version puts a directory on PATH"},
	{".ruby-version", W, S | E, "mise (idiomatic version file): a path: version puts a directory on PATH"},
	{".go-version", W, S | E, "mise (idiomatic version file): a path: version puts a directory on PATH"},
	{".java-version", W, S | E, "mise (idiomatic version file): a path: version puts a directory on PATH"},
	{".sdkmanrc", W, S | E, "mise (idiomatic version file): a path: version puts a directory on PATH"},
	{".bun-version", W, S | E, "mise (idiomatic version file): a path: version puts a directory on PATH"},
	{".terraform-version", W, S | E, "mise (idiomatic version file): a path: version puts a directory on PATH"},
	{".yvmrc", W, S | E, "mise (idiomatic version file): a path: version puts a directory on PATH"},
	/* f4: Sapling's repository config (.hg/hgrc's, in a Sapling
	 * repository; in a Git one, .git/sl: sandbox/gitprotect.c). */
	{".sl/config", W, S | D, "Sapling repository config: hooks run at every sl command"},
	{".sl/sharedpath", W, S | D, "Sapling share source: its config's hooks run"},
	/* f5: IDE project files that run programs (.idea's run
	 * configurations): JetBrains' shared ones in .run/, Eclipse's
	 * external tool builders, run at every automatic build. */
	{".run", W, S | E, "JetBrains shared run configurations (.idea/runConfigurations' other place)"},
	{".project", W, S | E, "Eclipse project: its builders run at every automatic build"},
	{".externalToolBuilders", W, S | E, "Eclipse external tool builders: programs run at every automatic build"},
	/* Round 37 of the attack: direnv's layout directory, where its
	 * stdlib and nix-direnv keep state the allowed .envrc then runs at
	 * every cd: nix-direnv's `use flake` and `use nix` eval a cached
	 * .direnv/flake-profile*.rc (or cache-*) newer than .envrc and the
	 * flake, without asking; `layout python` puts .direnv/python-X/bin
	 * first on PATH. Never a placeholder (E), as the version files. */
	{".direnv", W, S | E, "direnv's layout directory: nix-direnv evals its cached *.rc at every cd, layout puts a bin/ on PATH"},
	/* Round 38 of the attack, the same family: devenv.sh's state
	 * directory. `use devenv` in an allowed .envrc (and `devenv shell`)
	 * takes the shell environment from .devenv's eval cache
	 * (nix-eval-cache.db, devenv 1.3 on) while the files it watches are
	 * unchanged, and puts .devenv/profile/bin first on PATH; and its
	 * local overrides, imported beside devenv.nix and devenv.yaml (an
	 * enterShell there runs at the next cd, no direnv allow asked),
	 * are git-ignored by `devenv init`, so a review of the diff does
	 * not show them (.envrc.local's case). Never a placeholder (E). */
	{".devenv", W, S | E, "devenv's state directory: its eval cache is the shell environment direnv and devenv shell load, profile/bin goes on PATH"},
	{"devenv.local.nix", W, S | E, "devenv's local override: its enterShell runs at the next cd (git-ignored by devenv init)"},
	{"devenv.local.yaml", W, S | E, "devenv's local override: its imports run at the next cd (git-ignored by devenv init)"},
	/* Round 42 of the attack, .envrc's family: the other shell hooks
	 * that source a file of the directory the shell enters, once the
	 * user said yes to it (as direnv's allow): RVM's .rvmrc, zsh-autoenv's
	 * enter and leave files, autoenv's leave file (its enter file is
	 * .env, which dotenv loaders read too: gitguard.c's check_dotenv()).
	 * Never a placeholder (E). */
	{".rvmrc", W, S | E, "RVM sources it on cd (once trusted)"},
	{".autoenv.zsh", W, S | E, "zsh-autoenv sources it on cd (once authorized)"},
	{".autoenv_leave.zsh", W, S | E, "zsh-autoenv sources it when the shell leaves the directory"},
	{".env.leave", W, S | E, "autoenv sources it when the shell leaves the directory"},
	/* Round 45 of the attack: files at the top of a work tree that
	 * git's companions read at the user's own git operations (a commit,
	 * a push, a review), not at a build of the project. gitlint's
	 * commit-msg hook (`gitlint install-hook`) reads .gitlint from the
	 * directory it runs in, and its [general] extra-path imports the
	 * Python rules of a directory it names, at every commit (the hook
	 * managers' family above). git-lfs's pre-push hook, smudge filter
	 * and `git lfs` commands read .lfsconfig (lfs.url, lfs.pushurl,
	 * remote.NAME.lfsurl, lfs.URL.access): the repository's objects go
	 * to, and the file contents come from, a host of the session's
	 * choosing, with what the credential helper answers for it.
	 * git-review reads .gitreview's host and fetches from it the
	 * commit-msg hook it installs. Never a placeholder (E). */
	{".gitlint", W, S | E, "gitlint's commit-msg hook imports the Python rules its extra-path names"},
	{".lfsconfig", W, S | E, "git-lfs sends the objects (and credentials) to its lfs.url at the host's git push"},
	{".gitreview", W, S | E, "git-review installs the commit-msg hook it fetches from the host named there"},
};

#undef R
#undef W
#undef H
#undef S
#undef Y
#undef D
#undef E
#undef P
#undef Z
#undef T

/* Contract in policy.h: the stores first, then the write-only rows. */
size_t policy_mandatory_count(void)
{
	return ARRAY_LEN(stores) + ARRAY_LEN(mandatory);
}

/* Contract in policy.h. */
const struct policy_mandatory *policy_mandatory_get(size_t i)
{
	if (i < ARRAY_LEN(stores))
		return &stores[i].m;
	i -= ARRAY_LEN(stores);
	return i < ARRAY_LEN(mandatory) ? &mandatory[i] : NULL;
}

/*
 * The write rows a tool finds elsewhere by a variable of its own (review
 * of round 42): npx's install tree is the _npx of npm's cache, wherever
 * npm_config_cache puts it (an XDG layout's ~/.cache/npm, a project's
 * directory, as the docs suggest for a new package), pnpm dlx's the dlx
 * of pnpm's cache-dir. npm and pnpm read such a variable in either case.
 */
static const struct {
	const char *path;
	const char *env;
} write_env[] = {
	{".npm/_npx", "$npm_config_cache/_npx $NPM_CONFIG_CACHE/_npx"},
	{".cache/pnpm/dlx", "$npm_config_cache_dir/dlx $NPM_CONFIG_CACHE_DIR/dlx $pnpm_config_cache_dir/dlx "
			    "$PNPM_CONFIG_CACHE_DIR/dlx"},
	/* Round 43 */
	{".cache/node/corepack", "$COREPACK_HOME"},
	{".local/share/uv/tools", "$UV_TOOL_DIR $UV_TOOL_BIN_DIR"},
	{".local/pipx", "$PIPX_HOME $PIPX_BIN_DIR"},
	{".bun/bin", "$BUN_INSTALL/bin"},
	{".bun/install/global", "$BUN_INSTALL/install/global"},
	{".deno/bin", "$DENO_INSTALL_ROOT"},
	{".volta", "$VOLTA_HOME"},
	{".asdf", "$ASDF_DATA_DIR"},
	{".local/share/mise", "$MISE_DATA_DIR"},
	{".nvm", "$NVM_DIR"},
	{".local/share/fnm", "$FNM_DIR"},
	{".local/share/gem", "$GEM_HOME"},
	/* Round 44: go install's directory, GOBIN, else each GOPATH
	 * entry's bin/ */
	{"go/bin", "$GOBIN $GOPATH:/bin"},
	/* Round 45 */
	{".opam", "$OPAMROOT"},
};

/* Contract in policy.h. */
const char *policy_mandatory_env(size_t i)
{
	const struct policy_mandatory *m;

	if (i < ARRAY_LEN(stores))
		return stores[i].env;
	m = policy_mandatory_get(i);
	for (size_t k = 0; m != NULL && k < ARRAY_LEN(write_env); k++)
		if ((m->where & POLICY_MAND_HOME) && strcmp(m->path, write_env[k].path) == 0)
			return write_env[k].env;
	return NULL;
}

/* Contract in policy.h. */
bool policy_mandatory_session(const char *path)
{
	const char *last = strrchr(path, '/');

	last = last != NULL ? last + 1 : path;
	for (size_t i = 0; i < ARRAY_LEN(mandatory); i++) {
		const char *row = strrchr(mandatory[i].path, '/');

		if (!(mandatory[i].where & POLICY_MAND_SESSION))
			continue;
		row = row != NULL ? row + 1 : mandatory[i].path;
		if (strcmp(row, last) == 0)
			return true;
	}
	return false;
}

/* XDG base directories and the default each stands for under HOME. */
static const struct {
	const char *under; /* with its trailing slash */
	const char *var;
} xdg_bases[] = {
	{".config/", "XDG_CONFIG_HOME"},
	{".local/share/", "XDG_DATA_HOME"},
	{".local/state/", "XDG_STATE_HOME"},
	{".cache/", "XDG_CACHE_HOME"},
};

/* Contract in policy.h. */
const char *policy_mandatory_xdg(const struct policy_mandatory *m, const char **rest)
{
	if ((m->where & POLICY_MAND_HOME) == 0)
		return NULL;
	for (size_t i = 0; i < ARRAY_LEN(xdg_bases); i++) {
		size_t n = strlen(xdg_bases[i].under);
		if (strncmp(m->path, xdg_bases[i].under, n) == 0 && m->path[n] != '\0') {
			*rest = m->path + n;
			return xdg_bases[i].var;
		}
	}
	return NULL;
}

/* ------------------------------------------------------------------ */
/* The environment rule (SPEC §3.6)                                     */
/* ------------------------------------------------------------------ */

/* Name patterns, compared without regard to case. */
static const char *const name_contains[] = {
	"SECRET", "PASSWORD", "PASSWD", "PASSPHRASE", "CREDENTIAL", "PRIVATE",
	"API_KEY", "APIKEY", "ACCESS_KEY", "_TOKEN_", "SESSION", "AUTHORIZATION",
	"_AUTH_", "COOKIE", "WEBHOOK", "SIGNING", "CONNECTION_STRING", "SEED_PHRASE", "MNEMONIC",
};
/* The short words PASS, CREDS, AUTH and BEARER hold a secret at either
 * end of a name, with or without a '_' (round 32 of the attack: SSHPASS,
 * DBPASS, CREDS, AUTH, BEARER passed): ends with the word, or starts
 * with it and a '_'. */
static const char *const name_prefixes[] = {
	"AUTH_", "PASS_", "CREDS_", "BEARER_",
};
static const char *const name_suffixes[] = {
	"TOKEN", "_KEY", "_APIKEY", "PASS", "_PWD", "AUTH", "_COOKIE",
	"_PAT", "_JWT", "_DSN", "CREDS", "BEARER",
	/* round 34 of the attack, d6 */
	"_PW", "_SALT", "MNEMONIC", "OTP_SEED", "MFA_SEED", "WALLET_SEED", "SEED_WORDS",
};
static const char *const name_exact[] = {
	"APIKEY", "API_KEY", "KEY", "PW", "SALT", "MNEMONIC", "OTP", "TOTP",
};
/* Words a suffix above ends that hold no secret: the password prompt
 * programs (SSH_ASKPASS, SUDO_ASKPASS, GIT_ASKPASS, which editors set)
 * and a bypass switch. The value rule still applies. */
static const char *const name_word_suffixes[] = {
	"ASKPASS", "BYPASS",
};
/* A name ending so holds where a credential is, not the credential:
 * passed on (the filesystem rules decide whether it can be read). The
 * value rule still applies. */
static const char *const name_location_suffixes[] = {
	"_FILE", "_FILES", "_PATH", "_DIR", "_DIRS", "_SOCK", "_SOCKET",
};
/* Names a pattern above catches that hold no secret and that programs
 * expect (desktop session variables, Go's module privacy list): kept,
 * the value rule still applies. Exact, case-sensitive. */
static const char *const name_benign[] = {
	"XDG_SESSION_ID", "XDG_SESSION_TYPE", "XDG_SESSION_CLASS", "XDG_SESSION_DESKTOP",
	"XDG_SESSION_PATH", "KDE_SESSION_VERSION", "KDE_SESSION_UID", "DESKTOP_SESSION",
	"GDMSESSION", "SESSION_MANAGER", "DBUS_SESSION_BUS_ADDRESS", "GNOME_DESKTOP_SESSION_ID",
	"TERM_SESSION_ID", "GOPRIVATE", "GONOSUMDB", "GONOPROXY", "AWS_ROLE_SESSION_NAME",
	"WT_SESSION", "ZELLIJ_SESSION_NAME", "KONSOLE_DBUS_SESSION", "DBUS_SESSION_BUS_PID",
	"DBUS_SESSION_BUS_WINDOWID",
};

/* Whether the len bytes of name end with suffix (case-insensitive). */
static bool ends_with(const char *name, size_t len, const char *suffix)
{
	size_t s = strlen(suffix);

	return len >= s && strncasecmp(name + len - s, suffix, s) == 0;
}

/* Whether the len bytes of name contain needle (case-insensitive). */
static bool contains(const char *name, size_t len, const char *needle)
{
	size_t n = strlen(needle);

	for (size_t i = 0; i + n <= len; i++)
		if (strncasecmp(name + i, needle, n) == 0)
			return true;
	return false;
}

/* A byte that may appear in a token after its prefix. */
static bool token_char(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '_' || c == '-' || c == '.' || c == '/' || c == '+' || c == '=';
}

/* Minimum length of what follows a known prefix for the value to count as
 * a token ("sk-" alone or "AKIA" in a word is not one). */
#define ENV_TOKEN_MIN_TAIL 8

/* Bytes after which a token may start inside a value ("Bearer ghp_...",
 * "--token=ghp_...", "'ghp_...'", "a:ghp_..."), and bytes at which one
 * may end. */
#define TOKEN_BEFORE " \t\"':=,"
#define TOKEN_AFTER " \t\"',;"

/* Where in value a known token prefix (tokens.c, the table sentinels
 * keep) starts a token: at the start or after a TOKEN_BEFORE byte, then at
 * least ENV_TOKEN_MIN_TAIL token bytes up to the end or a TOKEN_AFTER
 * byte. -1 when nowhere. */
static long value_token_at(const char *v)
{
	size_t len = strlen(v), pre, end;

	for (size_t i = 0; i < len; i++) {
		if (i > 0 && strchr(TOKEN_BEFORE, v[i - 1]) == NULL)
			continue;
		pre = policy_token_prefix_len(v + i, len - i);
		if (pre == 0)
			continue;
		for (end = i + pre; end < len && token_char((unsigned char)v[end]); end++)
			;
		if (end - i - pre >= ENV_TOKEN_MIN_TAIL && (end == len || strchr(TOKEN_AFTER, v[end]) != NULL))
			return (long)i;
	}
	return -1;
}

/* Whether value is a JSON Web Token: "eyJ" (a base64url '{"'), then three
 * base64url parts separated by dots. */
static bool value_jwt(const char *v)
{
	unsigned dots = 0;
	size_t i;

	if (strncmp(v, "eyJ", 3) != 0)
		return false;
	for (i = 0; v[i] != '\0'; i++) {
		if (v[i] == '.')
			dots++;
		else if (!((v[i] >= 'a' && v[i] <= 'z') || (v[i] >= 'A' && v[i] <= 'Z') ||
			   (v[i] >= '0' && v[i] <= '9') || v[i] == '-' || v[i] == '_' || v[i] == '='))
			return false;
	}
	return dots == 2 && i >= 20;
}

/* Whether value is a URL whose user information holds a password
 * ("postgres://user:pass@host/db"). */
static bool value_url_password(const char *v)
{
	const char *p = v, *colon, *at;
	size_t auth;

	while ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
	       *p == '+' || *p == '-' || *p == '.')
		p++;
	if (p == v || strncmp(p, "://", 3) != 0)
		return false;
	p += 3;
	auth = strcspn(p, "/?#");
	at = memchr(p, '@', auth);
	if (at == NULL)
		return false;
	colon = memchr(p, ':', (size_t)(at - p));
	return colon != NULL && colon + 1 < at;
}

/* Whether the n bytes at s, lower-cased with '-' taken as '_', name a
 * setting that holds a secret: a query parameter ("?access_token=",
 * "&sig="), a connection-string or libpq keyword ("Password=",
 * "AccountKey=", "password="). */
static bool secret_setting(const char *s, size_t n)
{
	static const char *const exact[] = {
		"pass", "pwd", "pw", "key", "auth", "sig", "accountkey", "sharedaccesskey",
		"private_key", "privatekey", "sessionid", "session_id", "x_amz_security_token",
	};
	static const char *const suffixes[] = {
		"password", "passwd", "token", "secret", "apikey", "api_key", "signature",
		"authorization", "credential", "credentials", "secret_access_key", "secret_key",
	};
	char name[48];

	if (n == 0 || n >= sizeof(name))
		return false;
	for (size_t i = 0; i < n; i++)
		name[i] = s[i] == '-' ? '_' : (char)((s[i] >= 'A' && s[i] <= 'Z') ? s[i] + 32 : s[i]);
	name[n] = '\0';
	/* X-Amz-Credential and X-Goog-Credential name the key, not the secret. */
	if (strcmp(name, "x_amz_credential") == 0 || strcmp(name, "x_goog_credential") == 0)
		return false;
	for (size_t i = 0; i < ARRAY_LEN(exact); i++)
		if (strcmp(name, exact[i]) == 0)
			return true;
	for (size_t i = 0; i < ARRAY_LEN(suffixes); i++)
		if (ends_with(name, n, suffixes[i]))
			return true;
	return false;
}

/* Whether value holds NAME=VALUE with a secret_setting() NAME and a value
 * that is not empty, NAME starting the value or following one of
 * "?&#; \t" (a URL's query or fragment, a connection string, libpq
 * keywords, "a=b c=d" lists). */
static bool value_secret_setting(const char *v)
{
	for (size_t i = 0; v[i] != '\0'; i++) {
		size_t n;
		if (i > 0 && strchr("?&#; \t", v[i - 1]) == NULL)
			continue;
		n = strcspn(v + i, "=?&#; \t");
		if (v[i + n] != '=' || v[i + n + 1] == '\0' || strchr("&#; \t", v[i + n + 1]) != NULL)
			continue;
		if (secret_setting(v + i, n))
			return true;
	}
	return false;
}

/* Whether value is a webhook URL, whose path is the secret that lets
 * anyone post: a host that starts with "hooks." or holds "webhook", or a
 * path with "/webhook" in it (Slack, Discord, Teams, Zapier, ...), and a
 * path beyond "/". */
static bool value_webhook(const char *v)
{
	const char *p = strstr(v, "://"), *host, *path;
	size_t hlen;

	if (p == NULL || p == v || strcspn(v, ":") != (size_t)(p - v))
		return false;
	host = p + 3;
	hlen = strcspn(host, "/?#");
	path = host + hlen;
	if (path[0] != '/' || path[1] == '\0')
		return false;
	if (strncasecmp(host, "hooks.", 6) == 0 || contains(host, hlen, "webhook"))
		return true;
	return contains(path, strlen(path), "/webhook");
}

/* The shortest run of letters and digits in a URL's path that counts as
 * a token, when it mixes upper case, lower case and digits and changes
 * between them often enough to be drawn rather than written. */
#define URL_PATH_TOKEN_MIN 20

/* Whether the run r[0..n) of letters and digits looks drawn: upper,
 * lower and digit all present, and the class changes between neighbours
 * at least once every three bytes (random base62 changes about 6 times
 * in 10; "MyAwesomeProject2024" 4 times in 20, "Meta-Llama-3-8B" is
 * split at each '-'). */
static bool drawn_token(const char *r, size_t n)
{
	size_t changes = 0;
	int seen = 0, prev = -1;

	if (n < URL_PATH_TOKEN_MIN)
		return false;
	for (size_t k = 0; k < n; k++) {
		int c = r[k] >= '0' && r[k] <= '9' ? 0 : r[k] >= 'A' && r[k] <= 'Z' ? 1 : 2;

		seen |= 1 << c;
		changes += prev >= 0 && c != prev;
		prev = c;
	}
	return seen == 7 && changes * 3 >= n;
}

/* Whether value holds a URL (scheme://host/path, not file:) whose path
 * carries a token: a bot or API key, a capability link (Telegram's
 * /bot<id>:<key>/, a Slack or IFTTT key, a signed download path): a
 * drawn_token() run of letters and digits between the host and the
 * query. Hashes (hex), UUIDs, slugs and CamelCase names stay. Every URL
 * of the value is looked at ("--url https://... --mirror https://..."). */
static bool value_url_path_token(const char *v)
{
	for (const char *p = strstr(v, "://"); p != NULL; p = strstr(p + 3, "://")) {
		const char *path = p + 3 + strcspn(p + 3, "/?# \t\"'"), *run = NULL;

		if (p == v || !((p[-1] | 0x20) >= 'a' && (p[-1] | 0x20) <= 'z') || path[0] != '/')
			continue;
		if (p - v >= 4 && strncasecmp(p - 4, "file", 4) == 0)
			continue;
		for (const char *c = path;; c++) {
			bool alnum = (*c >= '0' && *c <= '9') || ((*c | 0x20) >= 'a' && (*c | 0x20) <= 'z');

			if (alnum) {
				if (run == NULL)
					run = c;
				continue;
			}
			if (run != NULL && drawn_token(run, (size_t)(c - run)))
				return true;
			run = NULL;
			if (*c == '\0' || strchr("?# \t\"'", *c) != NULL)
				break;
		}
	}
	return false;
}

/* Whether value carries an HTTP authorization: "Bearer " or "Basic "
 * (any case) at its start or after ':' or a space, then a credential of
 * at least 12 token bytes with a digit or both cases ("Basic settings
 * apply" is none) up to the end or a TOKEN_AFTER byte. */
static bool value_http_auth(const char *v)
{
	static const char *const schemes[] = {"bearer ", "basic "};

	for (size_t i = 0; v[i] != '\0'; i++) {
		if (i > 0 && v[i - 1] != ':' && v[i - 1] != ' ' && v[i - 1] != '"')
			continue;
		for (size_t s = 0; s < ARRAY_LEN(schemes); s++) {
			size_t k = strlen(schemes[s]), end;
			bool digit = false, upper = false, lower = false;
			if (strncasecmp(v + i, schemes[s], k) != 0)
				continue;
			for (end = i + k; token_char((unsigned char)v[end]); end++) {
				digit |= v[end] >= '0' && v[end] <= '9';
				upper |= v[end] >= 'A' && v[end] <= 'Z';
				lower |= v[end] >= 'a' && v[end] <= 'z';
			}
			if (end - i - k >= 12 && (digit || (upper && lower)) &&
			    (v[end] == '\0' || strchr(TOKEN_AFTER, v[end]) != NULL))
				return true;
		}
	}
	return false;
}

/* How many base64 digits (either alphabet) and hex digits an encoded
 * value's prefix is decoded from: enough for "-----BEGIN" under two
 * layers of base64 (96 digits give 72 bytes, whose 72 digits give 54). */
#define ENC_PREFIX_DIGITS 96

/* The value of base64 digit c in either alphabet, or -1. */
static int b64_digit(unsigned char c)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 26;
	if (c >= '0' && c <= '9')
		return c - '0' + 52;
	if (c == '+' || c == '-')
		return 62;
	if (c == '/' || c == '_')
		return 63;
	return -1;
}

/* Decodes the longest run of whole base64 quads at the start of v[0..n),
 * at most ENC_PREFIX_DIGITS digits, into out; the bytes made. */
static size_t b64_prefix(const unsigned char *v, size_t n, unsigned char *out)
{
	size_t k = 0, o = 0;

	while (k + 4 <= n && k + 4 <= ENC_PREFIX_DIGITS) {
		int d[4];
		for (int i = 0; i < 4; i++)
			d[i] = b64_digit(v[k + i]);
		if (d[0] < 0 || d[1] < 0 || d[2] < 0 || d[3] < 0)
			break;
		out[o++] = (unsigned char)(d[0] << 2 | d[1] >> 4);
		out[o++] = (unsigned char)((d[1] & 15) << 4 | d[2] >> 2);
		out[o++] = (unsigned char)((d[2] & 3) << 6 | d[3]);
		k += 4;
	}
	return o;
}

/* The length of what stands before a hex pair at v (what is left: n):
 * "0x" or "0X", "\\x", "%" (a C or shell escape, a URL's percent
 * encoding), or nothing. */
static size_t hex_pair_lead(const unsigned char *v, size_t n)
{
	if (n >= 2 && ((v[0] == '0' && (v[1] | 0x20) == 'x') || (v[0] == '\\' && v[1] == 'x')))
		return 2;
	return n >= 1 && v[0] == '%' ? 1 : 0;
}

/* Decodes the hex pairs at the start of v[0..n), at most
 * max bytes, into out; the bytes made. A pair may stand
 * after "0x", "\\x" or "%", and pairs may be parted by one of ':', ' ',
 * ',', '-' or ';' (and a space after it): "2d:2d:2d...", "0x2d, 0x2d",
 * "\\x2d\\x2d", "%2D%2D" (the review of round 33, E2: colon hex, as
 * openssl and key tools print bytes). The lead and the separator are those
 * of the first pair, the same all along. *all is set when the whole of v
 * is such hex. */
static size_t hex_prefix(const unsigned char *v, size_t n, unsigned char *out, size_t max, bool *all)
{
	size_t k = 0, o = 0, lead = hex_pair_lead(v, n);
	unsigned char sep = 0;
	bool sep_space = false;

	for (;;) {
		size_t at = k;

		if (at > 0 && sep != 0) {
			if (at >= n || v[at] != sep)
				break;
			at++;
			if (sep_space && (at >= n || v[at] != ' '))
				break;
			at += sep_space;
		}
		if (lead > 0 && (hex_pair_lead(v + at, n - at) != lead || memcmp(v + at, v, lead) != 0))
			break;
		at += lead;
		if (at + 2 > n || hex_digit(v[at]) < 0 || hex_digit(v[at + 1]) < 0)
			break;
		if (o < max)
			out[o++] = (unsigned char)(hex_digit(v[at]) << 4 | hex_digit(v[at + 1]));
		k = at + 2;
		/* "0x2d2d2d...": one lead before all the pairs (E3 of round 34). */
		if (o == 1 && lead > 0 && k < n && hex_digit(v[k]) >= 0)
			lead = 0;
		if (o == 1 && k < n && strchr(":,-; ", v[k]) != NULL && v[k] != '\0') {
			sep = v[k];
			sep_space = sep != ' ' && k + 1 < n && v[k + 1] == ' ';
		}
	}
	*all = k == n;
	return o;
}

/* The number of hex digit pairs in v[0..n) (whatever stands between). */
static size_t hex_pairs(const unsigned char *v, size_t n)
{
	size_t d = 0;

	for (size_t k = 0; k < n; k++)
		d += hex_digit(v[k]) >= 0;
	return d / 2;
}

/* The value of base32 digit c (RFC 4648's alphabet, either case), or -1. */
static int b32_digit(unsigned char c)
{
	if ((c | 0x20) >= 'a' && (c | 0x20) <= 'z')
		return (c | 0x20) - 'a';
	return c >= '2' && c <= '7' ? c - '2' + 26 : -1;
}

/* Decodes the longest run of whole base32 octets at the start of
 * v[0..n), at most ENC_PREFIX_DIGITS digits, into out; the bytes made
 * (the review of round 33, E2: base32 of a PEM block). */
static size_t b32_prefix(const unsigned char *v, size_t n, unsigned char *out)
{
	size_t k = 0, o = 0;

	while (k + 8 <= n && k + 8 <= ENC_PREFIX_DIGITS) {
		uint64_t acc = 0;
		int i;

		for (i = 0; i < 8 && b32_digit(v[k + i]) >= 0; i++)
			acc = acc << 5 | (uint64_t)b32_digit(v[k + i]);
		if (i < 8)
			break;
		for (int b = 4; b >= 0; b--)
			out[o++] = (unsigned char)(acc >> (8 * b));
		k += 8;
	}
	return o;
}

/* Whether the n bytes at v start compressed data: gzip, zlib (the
 * usual levels' headers, no preset dictionary), bzip2, xz or zstd. */
static const char *compressed_start(const unsigned char *v, size_t n)
{
	if (n >= 3 && v[0] == 0x1f && v[1] == 0x8b && v[2] == 0x08)
		return "its value is compressed data (gzip), encoded, which can hide a key";
	/* zlib: CMF 0x78 (deflate, 32 KiB window), FLG of level 1, 2-5, 6 or
	 * 7-9, then a deflate block of type 0, 1 or 2 (the review of round
	 * 33, E2: "eJzT1dUFAidXd08..."). */
	if (n >= 3 && v[0] == 0x78 && (v[1] == 0x01 || v[1] == 0x5e || v[1] == 0x9c || v[1] == 0xda) &&
	    ((v[2] >> 1) & 3) != 3)
		return "its value is compressed data (zlib), encoded, which can hide a key";
	if (n >= 4 && memcmp(v, "PK\x03\x04", 4) == 0)
		return "its value is a zip archive, encoded, which can hide a key";
	if ((n >= 4 && memcmp(v, "BZh", 3) == 0 && v[3] >= '1' && v[3] <= '9') ||
	    (n >= 6 && memcmp(v, "\xfd" "7zXZ\0", 6) == 0) ||
	    (n >= 4 && memcmp(v, "\x28\xb5\x2f\xfd", 4) == 0))
		return "its value is compressed data (bzip2, xz or zstd), encoded, which can hide a key";
	return NULL;
}

/* Why the n bytes at v, the decoded start of an encoded value, are a key
 * hidden in an encoding: a PEM block ("-----BEGIN", after white space or
 * a byte order mark too), a private key's DER or an OpenSSH key's body,
 * compressed data (a compressed key or kubeconfig: gzip, bzip2, xz,
 * zstd), or any of them under one more layer of base64 or hex (depth
 * left). NULL when none. The family of round 32's review: a PEM as hex,
 * or gzip'd then base64'd, passed; round 33's: DER ("MIIEvQIBADAN..."),
 * "b3BlbnNzaC1rZXktdjE...", base64 of "\n-----BEGIN". */
static const char *decoded_secret(const unsigned char *v, size_t n, int depth)
{
	unsigned char out[ENC_PREFIX_DIGITS];
	size_t o, k = 0;
	bool all;

	/* A PEM block after white space or a byte order mark ("\n-----BEGIN"
	 * encoded: "Ci0tLS0t", " -----BEGIN": "IC0tLS0t"). */
	if (n >= 3 && v[0] == 0xef && v[1] == 0xbb && v[2] == 0xbf)
		k = 3;
	while (k < n && (v[k] == ' ' || v[k] == '\t' || v[k] == '\r' || v[k] == '\n'))
		k++;
	if (n - k >= 10 && memcmp(v + k, "-----BEGIN", 10) == 0)
		return "its value is a PEM block, encoded (base64 or hex)";
	/* A key without its PEM lines: an OpenSSH key's body
	 * ("b3BlbnNzaC1rZXktdjE..."), or DER whose SEQUENCE starts with
	 * INTEGER 0 to 3: PKCS#1, PKCS#8 or SEC1 private keys ("MIIEvQIBADAN...",
	 * "MIIEowIBAAKC...", "MHcCAQEEI...") or a PKCS#12 file ("MIIJ...AgEDMIIJ",
	 * a signing certificate with its key); certificates and public keys
	 * start with a SEQUENCE instead. */
	if (n >= 15 && memcmp(v, "openssh-key-v1", 15) == 0)
		return "its value is an OpenSSH private key, encoded (base64 or hex)";
	if (n >= 7 && v[0] == 0x30) {
		size_t at = v[1] < 0x80 ? 2 : v[1] >= 0x81 && v[1] <= 0x83 ? 2 + (size_t)(v[1] - 0x80) : n;
		if (at + 3 <= n && v[at] == 0x02 && v[at + 1] == 0x01 && v[at + 2] <= 0x03)
			return "its value is a private key or PKCS#12 file (DER), encoded (base64 or hex)";
	}
	if (n >= 20 && memcmp(v, "PuTTY-User-Key-File-", 20) == 0)
		return "its value is a PuTTY private key, encoded";
	if (compressed_start(v, n) != NULL)
		return compressed_start(v, n);
	if (depth == 0)
		return NULL;
	o = b64_prefix(v, n, out);
	if (o >= 12) {
		const char *why = decoded_secret(out, o, depth - 1);
		if (why != NULL)
			return why;
	}
	o = b32_prefix(v, n, out);
	if (o >= 10) {
		const char *why = decoded_secret(out, o, depth - 1);
		if (why != NULL)
			return why;
	}
	o = hex_prefix(v, n, out, ENC_PREFIX_DIGITS / 2, &all);
	return o >= 10 ? decoded_secret(out, o, depth - 1) : NULL;
}

/* What, found in a value's text (as it is, unescaped, or decoded from a
 * whole value in base64, base32 or hex), is a credential: a PEM private
 * key (also as a JSON string, or PGP's "PRIVATE KEY BLOCK"), a service
 * account's "private_key" field, a kubeconfig's client key, a PuTTY
 * key. */
static const char *const text_markers[] = {"PRIVATE KEY-----", "PRIVATE KEY BLOCK-----", "\"private_key\"",
					   "client-key-data:", "PuTTY-User-Key-File-",
					   /* a PEM's first line without its dashes (E4) */
					   "BEGIN PRIVATE KEY", "BEGIN RSA PRIVATE KEY", "BEGIN EC PRIVATE KEY",
					   "BEGIN DSA PRIVATE KEY", "BEGIN OPENSSH PRIVATE KEY",
					   "BEGIN ENCRYPTED PRIVATE KEY", "BEGIN PGP PRIVATE KEY"};

/* The fewest digits a whole value is decoded from to look for
 * text_markers (a shorter text cannot hold a key). */
#define TEXT_DECODE_MIN 64

/* Whether the n bytes at t hold one of text_markers. */
static bool text_has_marker(const unsigned char *t, size_t n)
{
	for (size_t i = 0; i < ARRAY_LEN(text_markers); i++)
		if (memmem(t, n, text_markers[i], strlen(text_markers[i])) != NULL)
			return true;
	return false;
}

/* Whether c is white space a wrapped encoding breaks its lines with. */
static bool wrap_space(unsigned char c)
{
	return c == '\n' || c == '\r' || c == ' ' || c == '\t';
}

/*
 * Decodes the whole of u[0..n) in base 64 (bits 6) or base 32 (bits 5),
 * digit() giving each digit's value, into out (n bytes); white space
 * between digits skipped (GNU base64 wraps at 76 columns: the review of
 * round 34, E1), up to pad '=' at the end. The bytes made, or 0 when u
 * is not that or holds fewer than TEXT_DECODE_MIN digits.
 */
static size_t whole_decode(const unsigned char *u, size_t n, unsigned char *out, int (*digit)(unsigned char),
			   unsigned bits, size_t pad)
{
	size_t digits = 0, o = 0, k = 0, eq = 0;
	uint64_t acc = 0;
	unsigned have = 0;

	for (; k < n; k++) {
		int d;

		if (wrap_space(u[k]))
			continue;
		if (u[k] == '=') {
			eq++;
			continue;
		}
		if (eq > 0 || (d = digit(u[k])) < 0)
			return 0;
		digits++;
		acc = acc << bits | (uint64_t)d;
		have += bits;
		if (have >= 8) {
			have -= 8;
			out[o++] = (unsigned char)(acc >> have);
		}
	}
	return digits >= TEXT_DECODE_MIN && eq <= pad ? o : 0;
}

/* The whole of u[0..n) as base64 (either alphabet); whole_decode(). */
static size_t whole_b64(const unsigned char *u, size_t n, unsigned char *out)
{
	return whole_decode(u, n, out, b64_digit, 6, 2);
}

/* As whole_b64(), base32 (RFC 4648, either case). */
static size_t whole_b32(const unsigned char *u, size_t n, unsigned char *out)
{
	return whole_decode(u, n, out, b32_digit, 5, 6);
}

/* The value of ascii85 digit c ('!' to 'u'), or -1. */
static int a85_digit(unsigned char c)
{
	return c >= '!' && c <= 'u' ? c - '!' : -1;
}

/* The value of base85 digit c (RFC 1924's alphabet, git's and Python's
 * b85encode), or -1. */
static int b85_digit(unsigned char c)
{
	static const char alpha[] = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
				    "!#$%&()*+-;<=>?@^_`{|}~";
	const char *p = c != '\0' ? strchr(alpha, c) : NULL;

	return p != NULL ? (int)(p - alpha) : -1;
}

/*
 * As whole_b64(), a base-85 encoding (the review of round 34, E3: a PEM
 * as ascii85 or base85): groups of five digits give four bytes, a short
 * last group is padded with the highest digit; ascii85's "z" (four zero
 * bytes) and its "<~" "~>" frame are read. 0 when u is not that.
 */
static size_t whole_b85(const unsigned char *u, size_t n, unsigned char *out, int (*digit)(unsigned char))
{
	size_t o = 0, digits = 0, g = 0, cap = n;
	uint64_t acc = 0;
	bool a85 = digit == a85_digit;

	if (a85 && n >= 4 && memcmp(u, "<~", 2) == 0 && memcmp(u + n - 2, "~>", 2) == 0) {
		u += 2;
		n -= 4;
	}
	for (size_t k = 0; k <= n; k++) {
		int d;

		if (k < n && wrap_space(u[k]))
			continue;
		if (k < n && a85 && u[k] == 'z' && g == 0) {
			/* Four bytes from one digit: more than out (n bytes) can
			 * hold for a value of z's (the review of round 34, E1);
			 * a text of zeros holds no key. */
			if (o + 4 > cap)
				return 0;
			memset(out + o, 0, 4);
			o += 4;
			continue;
		}
		if (k == n) {
			if (g == 0)
				break;
			for (size_t pad = g; pad < 5; pad++)
				acc = acc * 85 + 84;
			if (acc > UINT32_MAX || o + 4 > cap)
				return 0;
			for (size_t b = 0; b + 1 < g; b++)
				out[o++] = (unsigned char)(acc >> (24 - 8 * b));
			break;
		}
		if ((d = digit(u[k])) < 0)
			return 0;
		digits++;
		acc = acc * 85 + (uint64_t)d;
		if (++g == 5) {
			if (acc > UINT32_MAX || o + 4 > cap)
				return 0;
			for (int b = 3; b >= 0; b--)
				out[o++] = (unsigned char)(acc >> (8 * b));
			acc = 0;
			g = 0;
		}
	}
	return digits >= TEXT_DECODE_MIN ? o : 0;
}

static size_t whole_a85(const unsigned char *u, size_t n, unsigned char *out)
{
	return whole_b85(u, n, out, a85_digit);
}

static size_t whole_rfc1924(const unsigned char *u, size_t n, unsigned char *out)
{
	return whole_b85(u, n, out, b85_digit);
}

/* As whole_b64(), hex as hex_prefix() reads it (separators, "0x"). */
static size_t whole_hex(const unsigned char *u, size_t n, unsigned char *out)
{
	bool all;
	size_t o = hex_prefix(u, n, out, n, &all);

	return all && o * 2 >= TEXT_DECODE_MIN ? o : 0;
}

/* Reads an HTML character reference below 0x80 at v ("&#45;", "&#x2d;")
 * into *out, its length into *len; false when there is none. */
static bool html_ref(const unsigned char *v, size_t n, unsigned char *out, int *len)
{
	size_t k = 2;
	unsigned val = 0;
	bool hex = k < n && (v[k] | 0x20) == 'x';

	k += hex;
	for (size_t start = k; k < n && k < start + 4; k++) {
		int d = hex ? hex_digit(v[k]) : (v[k] >= '0' && v[k] <= '9' ? v[k] - '0' : -1);
		if (d < 0)
			break;
		val = val * (hex ? 16 : 10) + (unsigned)d;
	}
	if (k >= n || v[k] != ';' || k == 2 + (size_t)hex || val >= 0x80)
		return false;
	*out = (unsigned char)val;
	*len = (int)(k + 1);
	return true;
}

/* Copies u[0..n) into out (n bytes) with its escapes undone: a URL's
 * "%HH", a C, shell or JSON string's "\\xHH", "\\uHHHH" (as one byte
 * when below 0x80), "\\n", "\\t", "\\r", "\\/", "\\\"" and "\\\\"; the
 * bytes made. */
static size_t unescape(const unsigned char *u, size_t n, unsigned char *out)
{
	size_t o = 0;

	for (size_t k = 0; k < n; k++) {
		int h1, h2;

		if (u[k] == '%' && k + 2 < n && (h1 = hex_digit(u[k + 1])) >= 0 && (h2 = hex_digit(u[k + 2])) >= 0) {
			out[o++] = (unsigned char)(h1 << 4 | h2);
			k += 2;
		} else if (u[k] == '\\' && k + 3 < n && u[k + 1] == 'x' && (h1 = hex_digit(u[k + 2])) >= 0 &&
			   (h2 = hex_digit(u[k + 3])) >= 0) {
			out[o++] = (unsigned char)(h1 << 4 | h2);
			k += 3;
		} else if (u[k] == '\\' && k + 5 < n && u[k + 1] == 'u' && hex_digit(u[k + 2]) == 0 &&
			   hex_digit(u[k + 3]) == 0 && (h1 = hex_digit(u[k + 4])) >= 0 && h1 < 8 &&
			   (h2 = hex_digit(u[k + 5])) >= 0) {
			out[o++] = (unsigned char)(h1 << 4 | h2);
			k += 5;
		} else if (u[k] == '\\' && k + 3 < n && u[k + 1] >= '0' && u[k + 1] <= '3' && u[k + 2] >= '0' &&
			   u[k + 2] <= '7' && u[k + 3] >= '0' && u[k + 3] <= '7') {
			/* octal, as printf and C write it (E4 of round 34) */
			out[o++] = (unsigned char)((u[k + 1] - '0') << 6 | (u[k + 2] - '0') << 3 | (u[k + 3] - '0'));
			k += 3;
		} else if (u[k] == '&' && k + 3 < n && u[k + 1] == '#' && html_ref(u + k, n - k, &out[o], &h1)) {
			/* an HTML character reference, &#45; or &#x2d; (E4) */
			o++;
			k += (size_t)h1 - 1;
		} else if (u[k] == '\\' && k + 1 < n && strchr("ntr/\"\\", u[k + 1]) != NULL) {
			k++;
			out[o++] = u[k] == 'n' ? '\n' : u[k] == 't' ? '\t' : u[k] == 'r' ? '\r' : u[k];
		} else {
			out[o++] = u[k];
		}
	}
	return o;
}

/* A byte of a setting's name: letters, digits, '_', '-', '.'. */
static bool setting_name_char(unsigned char c)
{
	return (c >= '0' && c <= '9') || ((c | 0x20) >= 'a' && (c | 0x20) <= 'z') || c == '_' || c == '-' ||
	       c == '.';
}

/* Whether the n bytes at v, a setting's value, look like a credential:
 * at least min bytes up to a space, quote, ',', ';', '&' or '}', not a
 * reference (`$VAR`, `${...}`, `%(...)`, `<...>`, `{{...}}`), not masked
 * (`***`), not a flag or null word. Short values need a digit or both
 * cases (strong). */
static bool setting_value(const unsigned char *v, size_t n, size_t min, bool strong)
{
	static const char *const words[] = {"true", "false", "null", "none", "yes", "no", "required", "optional",
					    "redacted", "changeme", "example", "string"};
	size_t k = 0;
	bool digit = false, upper = false, lower = false;

	if (n > 0 && strchr("$%<{*", v[0]) != NULL)
		return false;
	while (k < n && v[k] > ' ' && strchr("\"',;&}", v[k]) == NULL) {
		digit |= v[k] >= '0' && v[k] <= '9';
		upper |= v[k] >= 'A' && v[k] <= 'Z';
		lower |= v[k] >= 'a' && v[k] <= 'z';
		k++;
	}
	if (k < min || (strong && !digit && !(upper && lower)))
		return false;
	for (size_t i = 0; i < ARRAY_LEN(words); i++)
		if (k == strlen(words[i]) && strncasecmp((const char *)v, words[i], k) == 0)
			return false;
	return true;
}

/*
 * Whether the n bytes at t hold a credential as a setting, in the forms
 * configuration files and command lines write one (round 34 of the
 * attack, E2 and E5; value_secret_setting() knows NAME=VALUE in a URL's
 * query or a connection string): NAME=VALUE, NAME: VALUE, NAME = VALUE,
 * "NAME": "VALUE" (YAML, JSON, INI, an HTTP header such as
 * "Authorization: Token ..." or "X-API-Key: ..."), --NAME VALUE, a
 * .netrc's "password VALUE", curl's "-u user:pass", where NAME is a
 * secret_setting() name. A short name ("key", "auth", "pw") counts only
 * quoted or with '=', and with a strong value.
 */
static bool text_secret_setting(const unsigned char *t, size_t n)
{
	bool netrc = memmem(t, n, "machine ", 8) != NULL || memmem(t, n, "login ", 6) != NULL;

	for (size_t i = 0; i < n; i++) {
		size_t e = i, d = 0, at, len;
		unsigned char q = i > 0 && (t[i - 1] == '"' || t[i - 1] == '\'') ? t[i - 1] : 0;
		bool is_short, has_sep = false;
		char name[48];

		if (!setting_name_char(t[i]) || (i > 0 && setting_name_char(t[i - 1])))
			continue;
		while (e < n && setting_name_char(t[e]))
			e++;
		while (i + d < e && t[i + d] == '-')
			d++;
		len = e - i - d;
		/* curl's -u/--user user:pass */
		if (((d == 1 && len == 1 && t[i + 1] == 'u') || (d == 2 && len == 4 && memcmp(t + i + 2, "user", 4) == 0)) &&
		    e + 1 < n && (t[e] == ' ' || t[e] == '=')) {
			const unsigned char *c = memchr(t + e + 1, ':', n - e - 1);
			size_t sp = 0;

			while (e + 1 + sp < n && t[e + 1 + sp] != ' ' && t[e + 1 + sp] != '\t' && t[e + 1 + sp] != '\n')
				sp++;
			if (c != NULL && (size_t)(c - (t + e + 1)) < sp && c > t + e + 1 &&
			    setting_value(c + 1, n - (size_t)(c + 1 - t), 3, false))
				return true;
		}
		if (len == 0 || len >= sizeof(name) || !secret_setting((const char *)t + i + d, len))
			continue;
		memcpy(name, t + i + d, len);
		name[len] = '\0';
		is_short = len <= 4;
		at = e;
		if (q != 0 && at < n && t[at] == q)
			at++;
		while (at < n && (t[at] == ' ' || t[at] == '\t'))
			at++;
		if (at < n && (t[at] == '=' || (t[at] == ':' && !(at + 1 < n && t[at + 1] == '/')))) {
			has_sep = true;
			if (t[at] == ':' && is_short && q == 0)
				continue;
			at++;
		} else if (!(d == 2 || (netrc && (strcasecmp(name, "password") == 0 || strcasecmp(name, "passwd") == 0))) ||
			   at == e) {
			continue;
		}
		while (at < n && (t[at] == ' ' || t[at] == '\t'))
			at++;
		if (at < n && (t[at] == '"' || t[at] == '\''))
			at++;
		if (is_short && !(has_sep && (q != 0 || t[e] == '=')))
			continue;
		/* Only NAME=VALUE without spaces takes any value; the others
		 * (prose in a commit message: "--password PASSWORD", "password
		 * = read from file", "token: stored in keyring": the review of
		 * round 34, E3) a strong one, after an HTTP scheme word. */
		if (!(t[e] == '=' && !is_short)) {
			static const char *const schemes[] = {"Bearer ", "Basic ", "Token ", "token "};
			for (size_t k = 0; k < ARRAY_LEN(schemes); k++)
				if (n - at > strlen(schemes[k]) && memcmp(t + at, schemes[k], strlen(schemes[k])) == 0)
					at += strlen(schemes[k]);
		}
		if (setting_value(t + at, n - at, is_short ? 12 : t[e] == '=' ? 4 : 6, is_short || t[e] != '='))
			return true;
	}
	return false;
}

/*
 * Why the value u[0..n) holds a credential further in than its first
 * bytes: a private key or a service account's key in its text, as it is
 * (a JSON configuration with a PEM inside), with its escapes undone
 * ("-----BEGIN%20PRIVATE%20KEY-----", "\\u002d\\u002d..."), or in the text
 * the whole value decodes to from base64, base32 or hex (a cloud
 * service-account JSON file or a kubeconfig passed as one line: the
 * review of round 33, E2). NULL when not. The decoded copies are wiped.
 */
static const char *value_text_secret(const unsigned char *u, size_t n)
{
	size_t (*const decode[])(const unsigned char *, size_t, unsigned char *) = {whole_b64, whole_b32, whole_hex,
										   whole_a85, whole_rfc1924};
	const char *why = NULL;
	unsigned char *out;
	size_t o;

	if (text_has_marker(u, n))
		return "its value holds a private key or credential";
	if (text_secret_setting(u, n))
		return "its value holds a password, token or key setting";
	out = malloc(n + 1);
	if (out == NULL)
		return "its value could not be looked at (out of memory)";
	o = unescape(u, n, out);
	out[o] = '\0';
	if (o < n && (text_has_marker(out, o) || text_secret_setting(out, o)))
		why = "its value holds a private key or credential, escaped";
	for (size_t i = 0; i < ARRAY_LEN(decode) && why == NULL; i++) {
		o = decode[i](u, n, out);
		/* UTF-16's zero bytes dropped (E4 of round 34: a PEM saved
		 * as UTF-16, then base64): text with every other byte zero */
		if (o >= 4 && (out[0] == 0 || out[1] == 0 || (out[0] == 0xff && out[1] == 0xfe) ||
			       (out[0] == 0xfe && out[1] == 0xff))) {
			size_t w = 0;
			for (size_t k = 0; k < o; k++)
				if (out[k] != 0 && !(k < 2 && out[k] >= 0xfe))
					out[w++] = out[k];
			o = w;
		}
		out[o] = '\0';
		if (o > 0 && (text_has_marker(out, o) || text_secret_setting(out, o))) {
			static const char *const said[] = {
				"its value is base64 of a text holding a private key or credential",
				"its value is base32 of a text holding a private key or credential",
				"its value is hex of a text holding a private key or credential",
				"its value is ascii85 of a text holding a private key or credential",
				"its value is base85 of a text holding a private key or credential"};
			why = said[i];
		}
	}
	explicit_bzero(out, n + 1);
	free(out);
	return why;
}

/* Whether value, base64 (either alphabet), base32 or hex, decodes to a
 * key: a PEM block packed into one line, as CI systems and deploy
 * scripts pass keys ("LS0tLS1CRUdJTi...", "2d2d2d2d2d424547494e...",
 * "2d:2d:2d:..."), compressed data ("H4sI...", "1f8b08...", "eJ..."), or
 * either encoded twice; or whose text holds one further in. A hex value
 * starting compressed data must be longer than a SHA-256 (64 digits): a
 * commit id may start with gzip's or zlib's bytes. */
static const char *value_encoded_secret(const char *v)
{
	const unsigned char *u = (const unsigned char *)v;
	unsigned char out[ENC_PREFIX_DIGITS];
	size_t n, o;
	const char *why;
	bool all;

	/* White space or a quote before it (a value pasted from YAML or a
	 * shell line): " LS0tLS1CRUdJTi...", "\"LS0t...\"". */
	while (*u == ' ' || *u == '\t' || *u == '\r' || *u == '\n' || *u == '"' || *u == '\'')
		u++;
	n = strlen((const char *)u);
	o = b64_prefix(u, n, out);
	why = o >= 12 ? decoded_secret(out, o, 1) : NULL;
	if (why == NULL && (o = b32_prefix(u, n, out)) >= 10)
		why = decoded_secret(out, o, 1);
	if (why == NULL)
		why = value_text_secret(u, n);
	if (why != NULL)
		return why;
	o = hex_prefix(u, n, out, ENC_PREFIX_DIGITS / 2, &all);
	if (o < 10)
		return NULL;
	/* A digest (a commit id, a SHA-256, a colon-separated certificate
	 * fingerprint: 32 bytes or fewer) may start with gzip's or zlib's
	 * bytes. */
	if (compressed_start(out, o) != NULL && (!all || n <= 64 || hex_pairs(u, n) <= 32))
		return NULL;
	return decoded_secret(out, o, 1);
}

/* Whether value is a flag that no secret is: empty, 0, 1, true, false,
 * yes, no, on, off, y, n, enabled, disabled (any case). A name that
 * looks like a credential with such a value ("SKIP_AUTH=true",
 * "NO_AUTH=1") is kept. */
static bool value_flag(const char *v)
{
	static const char *const flags[] = {"",	   "0",	  "1", "true", "false", "yes",	   "no",
					    "on",  "off", "y", "n",    "enabled", "disabled"};

	for (size_t i = 0; i < ARRAY_LEN(flags); i++)
		if (strcasecmp(v, flags[i]) == 0)
			return true;
	return false;
}

/* Whether the len bytes of name are one of name_benign. */
static bool name_is_benign(const char *name, size_t len)
{
	for (size_t i = 0; i < ARRAY_LEN(name_benign); i++)
		if (strlen(name_benign[i]) == len && strncmp(name, name_benign[i], len) == 0)
			return true;
	return false;
}

/* Contract in policy.h. */
const char *policy_env_secret_reason(const char *entry)
{
	const char *eq = strchr(entry, '=');
	size_t len = eq != NULL ? (size_t)(eq - entry) : strlen(entry);
	bool location = false;
	const char *why;
	long at;

	if (len == 0 || eq == NULL)
		return NULL;
	if (strncmp(entry, "PASSAVANT_", 10) == 0)
		return NULL;
	for (size_t i = 0; i < ARRAY_LEN(name_location_suffixes) && !location; i++)
		location = ends_with(entry, len, name_location_suffixes[i]);
	for (size_t i = 0; i < ARRAY_LEN(name_word_suffixes) && !location; i++)
		location = ends_with(entry, len, name_word_suffixes[i]);
	if (!location && !name_is_benign(entry, len) && !value_flag(eq + 1)) {
		for (size_t i = 0; i < ARRAY_LEN(name_prefixes); i++)
			if (len >= strlen(name_prefixes[i]) &&
			    strncasecmp(entry, name_prefixes[i], strlen(name_prefixes[i])) == 0)
				return "its name looks like a credential";
		for (size_t i = 0; i < ARRAY_LEN(name_contains); i++)
			if (contains(entry, len, name_contains[i]))
				return "its name looks like a credential";
		for (size_t i = 0; i < ARRAY_LEN(name_suffixes); i++)
			if (ends_with(entry, len, name_suffixes[i]))
				return "its name looks like a credential";
		for (size_t i = 0; i < ARRAY_LEN(name_exact); i++)
			if (strlen(name_exact[i]) == len && strncasecmp(entry, name_exact[i], len) == 0)
				return "its name looks like a credential";
	}
	at = value_token_at(eq + 1);
	if (at == 0)
		return "its value starts with a known token prefix";
	if (at > 0)
		return "its value holds a token with a known prefix";
	if (value_jwt(eq + 1))
		return "its value is a JSON Web Token";
	if (strncmp(eq + 1 + strspn(eq + 1, " \t\r\n\"'"), "-----BEGIN", 10) == 0)
		return "its value is a PEM block";
	why = value_encoded_secret(eq + 1);
	if (why != NULL)
		return why;
	if (value_url_password(eq + 1))
		return "its value is a URL with a password";
	if (value_secret_setting(eq + 1))
		return "its value holds a password, token, key or signature setting";
	if (value_webhook(eq + 1))
		return "its value is a webhook URL";
	if (value_url_path_token(eq + 1))
		return "its value is a URL whose path holds a token";
	if (value_http_auth(eq + 1))
		return "its value is an HTTP authorization";
	return NULL;
}

/* Contract in policy.h. */
bool policy_env_named(const policy_t *p, const char *name, size_t len)
{
	for (size_t i = 0; i < p->n_creds; i++) {
		const struct policy_cred_ent *c = &p->creds[i];
		if (c->pub.kind == CRED_ENV && c->name != NULL && strlen(c->name) == len &&
		    strncmp(c->name, name, len) == 0)
			return true;
	}
	return false;
}

/* Writes the patterns of one list, "A, B, C". */
static void put_list(FILE *out, const char *const *v, size_t n, const char *pre, const char *post)
{
	for (size_t i = 0; i < n; i++)
		fprintf(out, "%s%s%s%s", i ? ", " : "", pre, v[i], post);
}

/* Contract in policy.h. */
void policy_print_env_rule(FILE *out, const char *lead)
{
	fprintf(out, "%sa variable credentials.envVars does not name is dropped when its name\n", lead);
	fprintf(out, "%s(any case) contains ", lead);
	put_list(out, name_contains, ARRAY_LEN(name_contains), "", "");
	fprintf(out, ",\n%sor ends with ", lead);
	put_list(out, name_suffixes, ARRAY_LEN(name_suffixes), "", "");
	fprintf(out, ",\n%sor starts with ", lead);
	put_list(out, name_prefixes, ARRAY_LEN(name_prefixes), "", "");
	fprintf(out, ",\n%sor is ", lead);
	put_list(out, name_exact, ARRAY_LEN(name_exact), "", "");
	fprintf(out, " (not when it ends with ");
	put_list(out, name_location_suffixes, ARRAY_LEN(name_location_suffixes), "", "");
	fprintf(out, ", ");
	put_list(out, name_word_suffixes, ARRAY_LEN(name_word_suffixes), "", "");
	fprintf(out, ",\n%snor for ", lead);
	put_list(out, name_benign, ARRAY_LEN(name_benign), "", "");
	fprintf(out, ", nor when its value is empty, 0, 1, true, false, yes, no, on, off,\n%s"
		     "y, n, enabled or disabled),\n"
		     "%sor when its value holds a known token prefix (ghp_, github_pat_, "
		     "glpat-, sk-, sk-ant-,\n%sxoxb-, AKIA, ASIA, AIza, npm_, pypi-, hf_, ...) followed "
		     "by at least %d token characters,\n%sat its start or after a space, quote, ':', '=' "
		     "or ',' (\"Bearer ghp_...\"),\n%sis a JSON Web Token (eyJ...), a PEM block\n%s"
		     "(-----BEGIN, or base64 or hex of it: LS0tLS1CRUdJTi..., 2d2d2d2d2d42...),\n"
		     "%sgzip, zlib, bzip2, xz or zstd data or a private key's DER or OpenSSH body in\n"
		     "%sbase64, base32 or hex (H4sI..., MIIEvQIBADAN..., b3BlbnNzaC1rZXktdjE...,\n"
		     "%s2d:2d:..., 0x2d, \\x2d, %%2D), any of them encoded twice, holds a private key\n"
		     "%sfurther in (as it is, escaped, or in a whole base64, base32 or hex value),\n"
		     "%sor a URL with a\n"
		     "%spassword (scheme://user:pass@host), holds a "
		     "setting NAME=VALUE whose NAME is a password,\n%stoken, key or signature (a URL's "
		     "query \"?access_token=\", \"&sig=\", a connection\n%sstring's "
		     "\"Password=\" or \"AccountKey=\"), is a webhook URL (host hooks.* or *webhook*,\n"
		     "%sor a path with /webhook), is a URL whose path holds a run of %d or more\n"
		     "%sletters and digits mixing upper case, lower case and digits, changing class\n"
		     "%sat least every third byte (a bot or API key), or holds \"Bearer \" or \"Basic \" "
		     "and a credential; "
		     "PASSAVANT_*\n%svariables are kept.\n",
		lead, lead, lead, ENV_TOKEN_MIN_TAIL, lead, lead, lead, lead, lead, lead, lead, lead, lead, lead, lead, lead,
		URL_PATH_TOKEN_MIN, lead, lead, lead);
}

/* Contract in policy.h. */
void policy_print_mandatory(const policy_t *p, FILE *out)
{
	fputs("# Mandatory rules, added to every policy (SPEC 3.3, 3.6; docs/config.md):\n", out);
	fputs("#   deny   where        path                                 what\n", out);
	for (size_t i = 0; i < policy_mandatory_count(); i++) {
		const struct policy_mandatory *m = policy_mandatory_get(i);
		const char *xdg, *rest, *env = policy_mandatory_env(i);
		char where[32];
		(void)snprintf(where, sizeof(where), "%s%s%s%s",
			       (m->where & POLICY_MAND_HOME) ? "~" : "",
			       (m->where & POLICY_MAND_HOME) && (m->where & POLICY_MAND_WORKSPACE)
				       ? "+"
				       : "",
			       (m->where & POLICY_MAND_WORKSPACE) ? "workspace" : "",
			       (m->where & POLICY_MAND_SYSTEM) ? "host" : "");
		fprintf(out, "#   %-6s %-12s %-36s %s\n",
			(m->deny & POLICY_MAND_READ) ? "read+w" : "write", where, m->path, m->why);
		xdg = (m->where & POLICY_MAND_HOME) ? policy_mandatory_xdg(m, &rest) : NULL;
		if (xdg != NULL && env != NULL)
			fprintf(out, "#%23salso at $%s/%s %s\n", "", xdg, rest, env);
		else if (xdg != NULL)
			fprintf(out, "#%23salso at $%s/%s\n", "", xdg, rest);
		else if (env != NULL)
			fprintf(out, "#%23salso at %s\n", "", env);
	}
	fputs("#   (~: under $HOME, under the home directory of the password database and\n"
	      "#    under each other home: a Windows home at /mnt/X/Users/NAME (WSL) or a\n"
	      "#    dual boot's /media/U/V/Users/NAME, a Mac's at /Users/NAME (a virtual\n"
	      "#    machine's share), any mount holding .ssh, .gnupg, .aws, .config/gh,\n"
	      "#    Library/Keychains or AppData/Roaming; their AppData and Library are\n"
	      "#    denied whole too;\n"
	      "#    workspace: under the working directory, each allowWrite directory and\n"
	      "#    the git repository each is in, and, created or changed in the run, in\n"
	      "#    every directory below them (moved aside); \"*.x\": any name ending so;\n"
	      "#    host: the host's own secrets, denied\n"
	      "#    whoever runs passavant, with /root whole unless HOME, the working\n"
	      "#    directory, a PATH directory or an allowed path lies in it. \"also at\":\n"
	      "#    a store is denied too where these variables of the environment `run`\n"
	      "#    starts in put it (\"$X\" the path X names, \"$X/f\" f in the directory\n"
	      "#    X names, \"$X:\" each entry of the colon list X, \"$X:/f\" f in each),\n"
	      "#    absolute values only.\n"
	      "#    A credential store named by an allowRead entry stays readable; a store\n"
	      "#    missing from this list is one denyRead entry in the policy.)\n",
	      out);
	fputs("#   write  PATH         each directory on $PATH, unless an allowWrite entry names it\n",
	      out);
	for (size_t i = 0; i < p->path_dirs.n; i++)
		fprintf(out, "#            %s\n", p->path_dirs.v[i]);
	fputs("#   write  each entry of $LD_LIBRARY_PATH, $LD_PRELOAD, $LD_AUDIT, $GCONV_PATH,\n"
	      "#          $PYTHONHOME, and $ENV, $BASH_ENV, $ZDOTDIR, $PYTHONSTARTUP,\n"
	      "#          $PYTHONUSERBASE, $PYTHONPYCACHEPREFIX, $GIT_EXEC_PATH, $OPENSSL_CONF,\n"
	      "#          $OPENSSL_MODULES, $OPENSSL_ENGINES, and the files $NODE_OPTIONS,\n"
	      "#          $RUBYOPT and the JVM's option variables load and the programs\n"
	      "#          $GIT_SSH_COMMAND, $EDITOR, $PAGER and the like name by a path, the\n"
	      "#          same way (code every later process loads or runs)\n",
	      out);
	fputs("#   write  ~/.*, ~/bin  when a writable tree holds HOME: each existing dot entry\n"
	      "#          of HOME and ~/bin, unless an allowWrite entry names it exactly (one\n"
	      "#          holding an allowWrite entry: its own entries, the same way)\n",
	      out);
	fputs("#   write  $XDG_CONFIG_HOME/git, $GIT_CONFIG_GLOBAL, $GIT_TEMPLATE_DIR, git's default\n"
	      "#          templates, and what the global and system git configs name:\n"
	      "#          init.templateDir, core.hooksPath, include.path, includeIf.*.path\n",
	      out);
	fputs("#   write  the policy file, the audit file, extraCaCertPaths, the session\n"
	      "#          directory and, in every repository, git's control files\n",
	      out);
	fputs("# Environment:\n", out);
	policy_print_env_rule(out, "#   ");
}
