package redact

import (
	"slices"

	"github.com/capwrap/capwrap/redact/internal/match"
	"github.com/capwrap/capwrap/redact/internal/scan"
)

// The token-shape rows of the built-in catalogue (SPEC §6 source 2): one row
// per documented credential format, taken from the provider's own
// documentation of it (the row's src). A row is data: the marker's kind,
// the keywords (the format's fixed prefix, matched exactly), and the shape
// of what follows in the notation of parseShape (shape.go): literal text and
// runs "[alphabet]{n}", "{n,m}", "{n,}" (open: any longer token is masked
// too, as it arrives). Where a provider documents the prefix but not the
// length, the length is a lower bound and the run is open, so that a real
// token is never let through for being longer than expected. A match is
// masked without any key beside it; a token glued to the word before it
// (xshpat_…) or with the wrong length or alphabet is not one.
//
// Decisions:
//   - Test, sandbox and publishable keys are not secrets and stay: Stripe's
//     sk_test_ (see catalogue.go), Shippo's shippo_test_, Duffel's
//     duffel_test_, EasyPost's EZTK…, Flutterwave's FLWSECK_TEST-, Lob's
//     test_…, Braintree's access_token$sandbox$…, Supabase's
//     sb_publishable_…, Mapbox's public pk.… tokens, New Relic's browser
//     keys NRJS-… (they are in every monitored page) and LaunchDarkly's
//     mobile and client-side ids.
//   - A keyword is the longest fixed part of the format, so the vector
//     prefilter (internal/match/teddy.go) sees few false starts:
//     Braintree's keyword is "$production$" (the span starts there;
//     "access_token" before it is no secret), Terraform's ".atlasv1." (the
//     14-character token id before it stays visible: a span never starts
//     before its keyword, as released bytes are final), Azure's a digit and
//     "Q~" (the three characters before them stay visible, the other 31 to
//     34 are masked).
//   - No checksum is verified. GitHub (ghp_…) and npm (npm_…) put a CRC32 of
//     the random part in the last six base62 characters, but their prefixes
//     are distinctive enough to mask without it, and a check that disagreed
//     with the provider's (the documentation gives no byte order, alphabet
//     or padding) would let real tokens through. Grafana's glsa_ and
//     Atlassian's tokens end in a checksum too, equally undocumented.
//
// Skipped, and why:
//   - Twilio: account SIDs (AC…) and API key SIDs (SK…) are identifiers, not
//     secrets; auth tokens and API key secrets are 32 hex digits with no
//     prefix, which only a key beside them tells (assignment rules).
//   - Datadog (32/40 hex), Okta (00 + 40), Cloudflare API tokens (40),
//     Mistral, Cohere, Twitch, Zendesk, Snyk and Codecov (UUIDs), Asana
//     (1/…, 2/…), Fastly, Confluent, Sumo Logic, MessageBird, Intercom,
//     Plaid, Mattermost, Railway, IBM Cloud, Mailgun's current keys, Azure
//     DevOps PATs: no distinctive prefix; only a key beside them tells.
//   - HashiCorp Vault's pre-1.10 "s."/"b." tokens: a two-byte prefix that
//     half the file names in a log start with (tests.py, utils.c); the
//     prefilter would pass every such position. hvs./hvb./hvr. are covered.
//   - Azure storage AccountKey= and SAS sig=: carriers (connection strings,
//     URLs), left to the assignment rules.
//   - GCP service-account private_key_id (40 hex, needs its JSON key) and
//     private keys (PEM, see private-key); Google OAuth client secrets
//     (GOCSPX-): the prefix is shown by the console but the format is not
//     documented.
//   - Telegram bot tokens outside the Bot API URL: the documentation gives
//     only an example ("123456:ABC-DEF…"), no prefix that would tell a bare
//     one from "host:port-and-more"; the documented URL form is covered.
//   - Anthropic admin keys (sk-ant-admin01-…) and OpenAI project, service
//     account and admin keys are covered by the sk-ant-/sk-proj- rows of
//     catalogue.go; Slack, Discord, DigitalOcean, PyPI, npm and Hugging
//     Face hf_ tokens too.
//   - Kubernetes service-account tokens and Pinata keys are JWTs (see jwt).
//   - Mailchimp (…-us12), New Relic license keys (…NRAL): the marker is a
//     suffix, and a span cannot start before its keyword.
//   - Facebook/Meta access tokens (EAA…): no published format.
type shapeRow struct {
	kind     string
	keywords []string
	shape    string
	afterKw  bool   // mask only what follows the keyword (a URL's secret part)
	need     string // the two bytes before the keyword must be of this set (else: not glued to a word)
	src      string // the provider's documentation of the format
}

// Alphabets the rows share.
const (
	shAlnum = "A-Za-z0-9"
	shHex   = "a-f0-9"
	shB64U  = "A-Za-z0-9_-"
)

// shapeRows are in priority order among themselves; they come after the
// rows of catalogue.go and before the JWT, header, URL and assignment rules
// (see withShapes), so "token=shpat_…" names the Shopify token.
var shapeRows = []shapeRow{
	// Source forges and CI.
	{kind: "gitlab-oauth-app-secret", keywords: []string{"gloas-"}, shape: "[A-Za-z0-9_.-]{20,}",
		src: "https://docs.gitlab.com/security/tokens/#token-prefixes"},
	{kind: "gitlab-scim-token", keywords: []string{"glsoat-"}, shape: "[A-Za-z0-9_.-]{20,}",
		src: "https://docs.gitlab.com/security/tokens/#token-prefixes"},
	{kind: "gitlab-incoming-mail-token", keywords: []string{"glimt-"}, shape: "[A-Za-z0-9_.-]{20,}",
		src: "https://docs.gitlab.com/security/tokens/#token-prefixes"},
	{kind: "gitlab-agent-token", keywords: []string{"glagent-"}, shape: "[A-Za-z0-9_.-]{20,}",
		src: "https://docs.gitlab.com/security/tokens/#token-prefixes"},
	{kind: "gitlab-feature-flags-token", keywords: []string{"glffct-"}, shape: "[A-Za-z0-9_.-]{20,}",
		src: "https://docs.gitlab.com/security/tokens/#token-prefixes"},
	{kind: "gitlab-runner-registration-token", keywords: []string{"GR1348941"}, shape: "[A-Za-z0-9_-]{20,}",
		src: "https://docs.gitlab.com/security/tokens/#token-prefixes"},
	{kind: "atlassian-api-token", keywords: []string{"ATATT3"}, shape: "[A-Za-z0-9_=-]{60,}",
		src: "https://support.atlassian.com/atlassian-account/docs/manage-api-tokens-for-your-atlassian-account/"},
	{kind: "atlassian-access-token", keywords: []string{"ATCTT3"}, shape: "[A-Za-z0-9_=-]{60,}",
		src: "https://support.atlassian.com/bitbucket-cloud/docs/access-tokens/"},
	{kind: "bitbucket-app-password", keywords: []string{"ATBB"}, shape: "[A-Za-z0-9]{28,}",
		src: "https://support.atlassian.com/bitbucket-cloud/docs/app-passwords/"},
	{kind: "buildkite-api-token", keywords: []string{"bkua_"}, shape: "[a-f0-9]{40}",
		src: "https://buildkite.com/docs/apis/managing-api-tokens"},
	{kind: "circleci-token", keywords: []string{"CCIPAT_", "CCIPRJ_"}, shape: "[A-Za-z0-9_]{40,}",
		src: "https://circleci.com/docs/managing-api-tokens/"},
	{kind: "sourcegraph-token", keywords: []string{"sgp_"}, shape: "[A-Za-z0-9_]{40,}",
		src: "https://sourcegraph.com/docs/cli/how-tos/creating_an_access_token"},
	{kind: "sonarqube-token", keywords: []string{"sqp_", "sqa_", "squ_"}, shape: "[a-f0-9]{40}",
		src: "https://docs.sonarsource.com/sonarqube-server/latest/user-guide/managing-tokens/"},
	{kind: "octopus-api-key", keywords: []string{"API-"}, shape: "[A-Z0-9]{25,32}",
		src: "https://octopus.com/docs/octopus-rest-api/how-to-create-an-api-key"},
	{kind: "jfrog-api-key", keywords: []string{"AKCp"}, shape: "[A-Za-z0-9]{69}",
		src: "https://jfrog.com/help/r/jfrog-platform-administration-documentation/api-key"},
	{kind: "jfrog-reference-token", keywords: []string{"cmVmdGtuOjAxOj"}, shape: "[A-Za-z0-9]{40,}",
		src: "https://jfrog.com/help/r/jfrog-platform-administration-documentation/access-tokens"},

	// Package registries.
	{kind: "rubygems-api-key", keywords: []string{"rubygems_"}, shape: "[a-f0-9]{48}",
		src: "https://guides.rubygems.org/api-key-scopes/"},
	{kind: "nuget-api-key", keywords: []string{"oy2"}, shape: "[a-z0-9]{43}",
		src: "https://learn.microsoft.com/en-us/nuget/nuget-org/scoped-api-keys"},
	{kind: "clojars-token", keywords: []string{"CLOJARS_"}, shape: "[A-Za-z0-9]{60}",
		src: "https://github.com/clojars/clojars-web/wiki/Deploy-Tokens"},
	{kind: "docker-hub-token", keywords: []string{"dckr_pat_", "dckr_oat_"}, shape: "[A-Za-z0-9_-]{20,}",
		src: "https://docs.docker.com/security/for-developers/access-tokens/"},

	// Infrastructure and secrets managers.
	{kind: "vault-service-token", keywords: []string{"hvs."}, shape: "[A-Za-z0-9_-]{24,}",
		src: "https://developer.hashicorp.com/vault/docs/concepts/tokens#token-prefixes"},
	{kind: "vault-batch-token", keywords: []string{"hvb."}, shape: "[A-Za-z0-9_-]{24,}",
		src: "https://developer.hashicorp.com/vault/docs/concepts/tokens#token-prefixes"},
	{kind: "vault-recovery-token", keywords: []string{"hvr."}, shape: "[A-Za-z0-9_-]{24,}",
		src: "https://developer.hashicorp.com/vault/docs/concepts/tokens#token-prefixes"},
	{kind: "terraform-cloud-token", keywords: []string{".atlasv1."}, shape: "[A-Za-z0-9_=-]{60,}", need: shAlnum,
		src: "https://developer.hashicorp.com/terraform/cloud-docs/users-teams-organizations/api-tokens"},
	{kind: "pulumi-access-token", keywords: []string{"pul-"}, shape: "[a-f0-9]{40}",
		src: "https://www.pulumi.com/docs/pulumi-cloud/access-management/access-tokens/"},
	{kind: "doppler-token", keywords: []string{"dp.pt.", "dp.st.", "dp.sa.", "dp.ct.", "dp.scim.", "dp.audit."}, shape: "[A-Za-z0-9_.-]{40,}",
		src: "https://docs.doppler.com/reference/auth-token-formats"},
	{kind: "onepassword-service-account-token", keywords: []string{"ops_eyJ"}, shape: "[A-Za-z0-9+/=_-]{100,}",
		src: "https://developer.1password.com/docs/service-accounts/"},
	{kind: "tailscale-key", keywords: []string{"tskey-"}, shape: "[A-Za-z0-9-]{30,}",
		src: "https://tailscale.com/kb/1277/key-prefixes"},
	{kind: "age-secret-key", keywords: []string{"AGE-SECRET-KEY-1"}, shape: "[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}",
		src: "https://age-encryption.org/v1"},
	{kind: "databricks-token", keywords: []string{"dapi"}, shape: "[a-f0-9]{32}",
		src: "https://docs.databricks.com/aws/en/dev-tools/auth/pat"},
	{kind: "dynatrace-token", keywords: []string{"dt0c01."}, shape: "[A-Z0-9]{24}.[A-Z0-9]{64}",
		src: "https://docs.dynatrace.com/docs/manage/identity-access-management/access-tokens-and-oauth-clients/access-tokens#token-format"},
	{kind: "grafana-cloud-token", keywords: []string{"glc_"}, shape: "[A-Za-z0-9+/=_-]{32,}",
		src: "https://grafana.com/docs/grafana-cloud/account-management/authentication-and-permissions/access-policies/"},
	{kind: "grafana-service-account-token", keywords: []string{"glsa_"}, shape: "[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}",
		src: "https://grafana.com/docs/grafana/latest/administration/service-accounts/"},
	{kind: "sentry-org-token", keywords: []string{"sntrys_"}, shape: "[A-Za-z0-9+/=_]{60,}",
		src: "https://docs.sentry.io/account/auth-tokens/"},
	{kind: "sentry-user-token", keywords: []string{"sntryu_"}, shape: "[a-f0-9]{64}",
		src: "https://docs.sentry.io/account/auth-tokens/"},
	{kind: "newrelic-user-key", keywords: []string{"NRAK-"}, shape: "[A-Z0-9]{27}",
		src: "https://docs.newrelic.com/docs/apis/intro-apis/new-relic-api-keys/"},
	{kind: "newrelic-insert-key", keywords: []string{"NRII-"}, shape: "[A-Za-z0-9_-]{32}",
		src: "https://docs.newrelic.com/docs/apis/intro-apis/new-relic-api-keys/"},
	{kind: "newrelic-query-key", keywords: []string{"NRIQ-"}, shape: "[A-Za-z0-9_-]{32}",
		src: "https://docs.newrelic.com/docs/apis/intro-apis/new-relic-api-keys/"},
	{kind: "newrelic-rest-api-key", keywords: []string{"NRRA-"}, shape: "[a-f0-9]{42}",
		src: "https://docs.newrelic.com/docs/apis/intro-apis/new-relic-api-keys/"},
	{kind: "cloudflare-origin-ca-key", keywords: []string{"v1.0-"}, shape: "[a-f0-9]{24}-[a-f0-9]{120,}",
		src: "https://developers.cloudflare.com/fundamentals/api/get-started/ca-keys/"},
	{kind: "heroku-api-key", keywords: []string{"HRKU-"}, shape: "[A-Za-z0-9_-]{30,}",
		src: "https://devcenter.heroku.com/articles/authentication"},
	{kind: "flyio-token", keywords: []string{"fm2_"}, shape: "[A-Za-z0-9+/=_,-]{40,}",
		src: "https://fly.io/docs/security/tokens/"},
	{kind: "flyio-token", keywords: []string{"fo1_"}, shape: "[A-Za-z0-9_-]{43}",
		src: "https://fly.io/docs/security/tokens/"},
	{kind: "supabase-access-token", keywords: []string{"sbp_"}, shape: "[a-f0-9]{40}",
		src: "https://supabase.com/docs/guides/platform/access-control#personal-access-tokens"},
	{kind: "supabase-secret-key", keywords: []string{"sb_secret_"}, shape: "[A-Za-z0-9_-]{20,}",
		src: "https://supabase.com/docs/guides/api/api-keys"},
	{kind: "netlify-token", keywords: []string{"nfp_"}, shape: "[A-Za-z0-9]{32,}",
		src: "https://docs.netlify.com/api/get-started/#authentication"},
	{kind: "planetscale-token", keywords: []string{"pscale_tkn_", "pscale_pw_", "pscale_oauth_"}, shape: "[A-Za-z0-9_-]{32,}",
		src: "https://planetscale.com/docs/concepts/service-tokens"},
	{kind: "render-api-key", keywords: []string{"rnd_"}, shape: "[A-Za-z0-9]{32,}",
		src: "https://render.com/docs/api#1-create-an-api-key"},
	{kind: "scalingo-token", keywords: []string{"tk-us-"}, shape: "[A-Za-z0-9_-]{48}",
		src: "https://doc.scalingo.com/platform/user-management/api-tokens"},
	{kind: "prefect-api-key", keywords: []string{"pnu_"}, shape: "[A-Za-z0-9]{36}",
		src: "https://docs.prefect.io/v3/manage/cloud/manage-users/api-keys"},
	{kind: "infracost-api-key", keywords: []string{"ico-"}, shape: "[A-Za-z0-9]{32}",
		src: "https://www.infracost.io/docs/integrations/environment_variables/"},

	// Clouds.
	{kind: "google-oauth-access-token", keywords: []string{"ya29."}, shape: "[A-Za-z0-9_-]{20,}",
		src: "https://developers.google.com/identity/protocols/oauth2#size"},
	{kind: "azure-ad-client-secret", keywords: []string{"0Q~", "1Q~", "2Q~", "3Q~", "4Q~", "5Q~", "6Q~", "7Q~", "8Q~", "9Q~"},
		shape: "[A-Za-z0-9_.~-]{31,34}", need: "A-Za-z0-9_.~-",
		src: "https://learn.microsoft.com/en-us/entra/identity-platform/how-to-add-credentials"},
	{kind: "alibaba-access-key-id", keywords: []string{"LTAI"}, shape: "[A-Za-z0-9]{12,20}",
		src: "https://www.alibabacloud.com/help/en/ram/user-guide/create-an-accesskey-pair"},
	{kind: "tencent-secret-id", keywords: []string{"AKID"}, shape: "[A-Za-z0-9]{32}",
		src: "https://www.tencentcloud.com/document/product/598/32675"},
	{kind: "yandex-oauth-token", keywords: []string{"y0_"}, shape: "[A-Za-z0-9_-]{50,}",
		src: "https://yandex.cloud/en/docs/iam/concepts/authorization/oauth-token"},
	{kind: "yandex-api-key", keywords: []string{"AQVN"}, shape: "[A-Za-z0-9_-]{35,38}",
		src: "https://yandex.cloud/en/docs/iam/concepts/authorization/api-key"},

	// AI providers.
	{kind: "openai-api-key", keywords: []string{"sk-"}, shape: "[A-Za-z0-9]{20}T3BlbkFJ[A-Za-z0-9]{20}",
		src: "https://platform.openai.com/docs/api-reference/authentication"},
	{kind: "openrouter-api-key", keywords: []string{"sk-or-v1-"}, shape: "[a-f0-9]{64}",
		src: "https://openrouter.ai/docs/api-reference/authentication"},
	{kind: "huggingface-org-token", keywords: []string{"api_org_"}, shape: "[A-Za-z]{34}",
		src: "https://huggingface.co/docs/hub/security-tokens"},
	{kind: "replicate-api-token", keywords: []string{"r8_"}, shape: "[A-Za-z0-9]{37}",
		src: "https://replicate.com/docs/reference/http#authentication"},
	{kind: "groq-api-key", keywords: []string{"gsk_"}, shape: "[A-Za-z0-9]{52}",
		src: "https://console.groq.com/docs/api-keys"},
	{kind: "perplexity-api-key", keywords: []string{"pplx-"}, shape: "[A-Za-z0-9]{40,}",
		src: "https://docs.perplexity.ai/guides/getting-started"},
	{kind: "xai-api-key", keywords: []string{"xai-"}, shape: "[A-Za-z0-9]{70,}",
		src: "https://docs.x.ai/docs/tutorial"},
	{kind: "langsmith-api-key", keywords: []string{"lsv2_pt_", "lsv2_sk_"}, shape: "[a-f0-9]{32}_[a-f0-9]{10}",
		src: "https://docs.smith.langchain.com/administration/how_to_guides/organization_management/create_account_api_key"},
	{kind: "pinecone-api-key", keywords: []string{"pcsk_"}, shape: "[A-Za-z0-9_]{50,}",
		src: "https://docs.pinecone.io/guides/projects/manage-api-keys"},
	{kind: "tavily-api-key", keywords: []string{"tvly-"}, shape: "[A-Za-z0-9-]{32,}",
		src: "https://docs.tavily.com/documentation/quickstart"},

	// Payments and commerce.
	{kind: "stripe-webhook-secret", keywords: []string{"whsec_"}, shape: "[A-Za-z0-9]{32,}",
		src: "https://docs.stripe.com/webhooks#verify-official-libraries"},
	{kind: "shopify-access-token", keywords: []string{"shpat_"}, shape: "[a-fA-F0-9]{32}",
		src: "https://shopify.dev/changelog/length-of-the-shopify-access-token-is-increasing"},
	{kind: "shopify-custom-app-token", keywords: []string{"shpca_"}, shape: "[a-fA-F0-9]{32}",
		src: "https://shopify.dev/changelog/length-of-the-shopify-access-token-is-increasing"},
	{kind: "shopify-private-app-token", keywords: []string{"shppa_"}, shape: "[a-fA-F0-9]{32}",
		src: "https://shopify.dev/changelog/length-of-the-shopify-access-token-is-increasing"},
	{kind: "shopify-shared-secret", keywords: []string{"shpss_"}, shape: "[a-fA-F0-9]{32}",
		src: "https://shopify.dev/changelog/app-secret-key-length-has-increased"},
	{kind: "square-access-token", keywords: []string{"EAAA"}, shape: "[A-Za-z0-9_-]{60}",
		src: "https://developer.squareup.com/docs/build-basics/access-tokens"},
	{kind: "square-access-token", keywords: []string{"sq0atp-"}, shape: "[A-Za-z0-9_-]{22}",
		src: "https://developer.squareup.com/docs/build-basics/access-tokens"},
	{kind: "square-application-secret", keywords: []string{"sq0csp-"}, shape: "[A-Za-z0-9_-]{43}",
		src: "https://developer.squareup.com/docs/build-basics/access-tokens"},
	{kind: "braintree-access-token", keywords: []string{"$production$"}, shape: "[a-z0-9]{16}$[a-f0-9]{32}", need: "a-z",
		src: "https://developer.paypal.com/braintree/docs/guides/authorization/access-token"},
	{kind: "shippo-live-token", keywords: []string{"shippo_live_"}, shape: "[a-f0-9]{40}",
		src: "https://docs.goshippo.com/docs/guides_general/authentication/"},
	{kind: "duffel-live-token", keywords: []string{"duffel_live_"}, shape: "[A-Za-z0-9_-]{43}",
		src: "https://duffel.com/docs/api/overview/making-requests/authentication"},
	{kind: "easypost-api-key", keywords: []string{"EZAK"}, shape: "[A-Za-z0-9]{54}",
		src: "https://docs.easypost.com/docs/authentication"},
	{kind: "flutterwave-secret-key", keywords: []string{"FLWSECK-"}, shape: "[a-f0-9]{32}",
		src: "https://developer.flutterwave.com/docs/authentication"},
	{kind: "lob-live-key", keywords: []string{"live_"}, shape: "[a-f0-9]{35}",
		src: "https://docs.lob.com/#section/Authentication"},

	// Communication and SaaS.
	{kind: "sendgrid-api-key", keywords: []string{"SG."}, shape: "[A-Za-z0-9_-]{22}.[A-Za-z0-9_-]{43}",
		src: "https://www.twilio.com/docs/sendgrid/ui/account-and-settings/api-keys"},
	{kind: "mailgun-api-key", keywords: []string{"key-"}, shape: "[a-f0-9]{32}",
		src: "https://documentation.mailgun.com/docs/mailgun/api-reference/authentication"},
	{kind: "brevo-api-key", keywords: []string{"xkeysib-"}, shape: "[a-f0-9]{64}-[A-Za-z0-9]{16}",
		src: "https://developers.brevo.com/docs/getting-started"},
	{kind: "brevo-smtp-key", keywords: []string{"xsmtpsib-"}, shape: "[a-f0-9]{64}-[A-Za-z0-9]{16}",
		src: "https://developers.brevo.com/docs/getting-started"},
	{kind: "telegram-bot-token", keywords: []string{"api.telegram.org/bot"}, shape: "[0-9]{5,16}:[A-Za-z0-9_-]{35}", afterKw: true,
		src: "https://core.telegram.org/bots/api#authorizing-your-bot"},
	{kind: "teams-webhook", keywords: []string{"webhook.office.com/webhookb2/"}, shape: "[A-Za-z0-9@/_-]{40,}", afterKw: true,
		src: "https://learn.microsoft.com/en-us/microsoftteams/platform/webhooks-and-connectors/how-to/add-incoming-webhook"},
	{kind: "zapier-webhook", keywords: []string{"hooks.zapier.com/hooks/catch/"}, shape: "[0-9]{4,12}/[A-Za-z0-9]{5,}", afterKw: true,
		src: "https://help.zapier.com/hc/en-us/articles/8496288690317"},
	{kind: "twitter-bearer-token", keywords: []string{"AAAAAAAAAAAAAAAAAAAAA"}, shape: "[A-Za-z0-9%]{50,}",
		src: "https://developer.x.com/en/docs/authentication/oauth-2-0/bearer-tokens"},
	{kind: "linear-api-key", keywords: []string{"lin_api_"}, shape: "[A-Za-z0-9]{40}",
		src: "https://linear.app/developers/graphql#personal-api-keys"},
	{kind: "notion-token", keywords: []string{"secret_"}, shape: "[A-Za-z0-9]{43}",
		src: "https://developers.notion.com/docs/authorization"},
	{kind: "notion-token", keywords: []string{"ntn_"}, shape: "[A-Za-z0-9]{40,}",
		src: "https://developers.notion.com/docs/authorization"},
	{kind: "postman-api-key", keywords: []string{"PMAK-"}, shape: "[a-f0-9]{24}-[a-f0-9]{34}",
		src: "https://learning.postman.com/docs/developer/postman-api/authentication/"},
	{kind: "figma-token", keywords: []string{"figd_"}, shape: "[A-Za-z0-9_-]{40,}",
		src: "https://www.figma.com/developers/api#access-tokens"},
	{kind: "typeform-token", keywords: []string{"tfp_"}, shape: "[A-Za-z0-9_=.-]{40,}",
		src: "https://www.typeform.com/developers/get-started/personal-access-token/"},
	{kind: "mapbox-secret-token", keywords: []string{"sk.eyJ"}, shape: "[A-Za-z0-9_-]{20,400}.[A-Za-z0-9_-]{20,}",
		src: "https://docs.mapbox.com/help/getting-started/access-tokens/"},
	{kind: "contentful-token", keywords: []string{"CFPAT-"}, shape: "[A-Za-z0-9_-]{43}",
		src: "https://www.contentful.com/developers/docs/references/authentication/"},
	{kind: "dropbox-token", keywords: []string{"sl."}, shape: "[A-Za-z0-9_.-]{130,}",
		src: "https://developers.dropbox.com/oauth-guide"},
	{kind: "launchdarkly-api-key", keywords: []string{"api-"}, shape: "[a-f0-9]{8}-[a-f0-9]{4}-[a-f0-9]{4}-[a-f0-9]{4}-[a-f0-9]{12}",
		src: "https://docs.launchdarkly.com/home/account/api"},
	{kind: "launchdarkly-sdk-key", keywords: []string{"sdk-"}, shape: "[a-f0-9]{8}-[a-f0-9]{4}-[a-f0-9]{4}-[a-f0-9]{4}-[a-f0-9]{12}",
		src: "https://docs.launchdarkly.com/sdk/concepts/client-side-server-side#keys"},
	{kind: "adafruit-io-key", keywords: []string{"aio_"}, shape: "[A-Za-z0-9]{28}",
		src: "https://io.adafruit.com/api/docs/#authentication"},
	{kind: "frameio-token", keywords: []string{"fio-u-"}, shape: "[A-Za-z0-9_=-]{64}",
		src: "https://developer.frame.io/docs/getting-started/authentication"},
	{kind: "readme-api-key", keywords: []string{"rdme_"}, shape: "[a-z0-9]{70}",
		src: "https://docs.readme.com/main/reference/intro/authentication"},
}

// entry turns a row into a catalogue entry.
func (r shapeRow) entry() catalogueEntry {
	return catalogueEntry{kind: r.kind, keywords: r.keywords, exact: true,
		det: func(k func(string) int32) match.Detector {
			var left, need *scan.ByteSet
			switch {
			case r.need != "":
				need = scan.NewSet(r.need)
			case !r.afterKw:
				left = setAlnum
			}
			return newShapeDet(k(r.kind), r.shape, r.afterKw, left, need)
		}}
}

// withShapes returns cat with the rows' entries spliced in before its JWT
// entry: after the token shapes of catalogue.go and before the rules that
// read a context (headers, URLs, assignments), which then name the token's
// kind when both start at the same byte.
func withShapes(cat []catalogueEntry, rows []shapeRow) []catalogueEntry {
	at := len(cat)
	for i, e := range cat {
		if e.kind == "jwt" {
			at = i
			break
		}
	}
	entries := make([]catalogueEntry, len(rows))
	for i, r := range rows {
		entries[i] = r.entry()
	}
	return slices.Insert(slices.Clone(cat), at, entries...)
}

func init() { catalogue = withShapes(catalogue, shapeRows) }
