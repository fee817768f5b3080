package redact

import (
	"slices"
	"sync"

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
//   - Test-mode and sandbox SECRET keys are secrets (issue 27): they read
//     and change the account's test data, settings, webhooks and team.
//     Stripe's sk_test_/rk_test_, Shippo's shippo_test_, Duffel's
//     duffel_test_, EasyPost's EZTK…, Flutterwave's FLWSECK_TEST-,
//     Braintree's access_token$sandbox$…, Square's sandbox-sq0csp- and
//     sandbox EAAA tokens and Plaid's access-sandbox- tokens are masked.
//     Lob's test_… keys are not a row: "test_" starts every other line of
//     a test log (77,816 times in BenchmarkWriterPlainLog's 8 MiB, each a
//     shape check, which halved its speed); they are masked by a key
//     beside them (LOB_API_KEY=, api_key:).
//     Publishable keys are public by design and stay (Stripe's key
//     documentation puts them in client-side code, https://docs.stripe.com/keys):
//     pk_test_/pk_live_, FLWPUBK…, Lob's test_pub_/live_pub_, Supabase's
//     sb_publishable_…, Mapbox's public pk.… tokens, PostHog's phc_
//     project keys, New Relic's browser keys NRJS-… (they are in every
//     monitored page) and LaunchDarkly's mobile and client-side ids.
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
//   - OpenAI's legacy user keys (sk-, 20, "T3BlbkFJ", 20): OpenAI documents
//     no format and no SDK checks one; dropped (issue 27: a row needs a
//     source). Such a key is masked by its carrier (OPENAI_API_KEY in the
//     environment, api_key=, Authorization: Bearer).
//   - Kubernetes service-account tokens and Pinata keys are JWTs (see jwt).
//   - Mailchimp (…-us12), New Relic license keys (…NRAL): the marker is a
//     suffix, and a span cannot start before its keyword.
//   - Facebook/Meta app secrets (32 hex digits): no prefix; only a key
//     beside them tells (FACEBOOK_APP_SECRET=, "app_secret":).
//   - Razorpay (rzp_test_/rzp_live_) and Twilio SIDs: ids, not secrets.
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
	// Atlassian's prefixes (ATAT API tokens, ATCT access tokens, ATBB app
	// passwords) as an Atlassian staff member confirmed them; the lengths
	// are lower bounds, open.
	{kind: "atlassian-api-token", keywords: []string{"ATATT3"}, shape: "[A-Za-z0-9_=-]{60,}",
		src: "https://community.atlassian.com/forums/Bitbucket-questions/Can-we-confirm-BitBucket-s-token-prefixes/qaq-p/3093481"},
	{kind: "atlassian-access-token", keywords: []string{"ATCTT3"}, shape: "[A-Za-z0-9_=-]{60,}",
		src: "https://community.atlassian.com/forums/Bitbucket-questions/Can-we-confirm-BitBucket-s-token-prefixes/qaq-p/3093481"},
	{kind: "bitbucket-app-password", keywords: []string{"ATBB"}, shape: "[A-Za-z0-9]{28,}",
		src: "https://community.atlassian.com/forums/Bitbucket-questions/Can-we-confirm-BitBucket-s-token-prefixes/qaq-p/3093481"},
	// Harness: "pat." or "sat.", account id, token id, secret.
	{kind: "harness-api-key", keywords: []string{"pat.", "sat."}, shape: "[A-Za-z0-9_-]{22}.[A-Za-z0-9]{24}.[A-Za-z0-9]{20}",
		src: "https://developer.harness.io/docs/platform/automation/api/add-and-manage-api-keys/"},
	// OpenShift OAuth access tokens: "sha256~" and 43 base64url characters.
	{kind: "openshift-user-token", keywords: []string{"sha256~"}, shape: "[A-Za-z0-9_-]{43}",
		src: "https://docs.redhat.com/en/documentation/openshift_container_platform/4.10/html-single/authentication_and_authorization/index#oauth-view-details-tokens_managing-oauth-access-tokens"},
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
	// NuGet.org keys are 46 characters of lower-case base32 ("oy2" is the
	// base32 of the id's "v4" prefix), as the gallery's ApiKeyV4 makes and
	// parses them.
	{kind: "nuget-api-key", keywords: []string{"oy2"}, shape: "[a-z2-7]{43}",
		src: "https://github.com/NuGet/NuGetGallery/blob/main/src/NuGetGallery.Services/Authentication/ApiKeyV4.cs"},
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
		src: "https://developer.hashicorp.com/terraform/cli/config/config-file#credentials"}, // its example token "xxxxxx.atlasv1.zzzzzzzzzzzzz"; the length is a lower bound
	{kind: "pulumi-access-token", keywords: []string{"pul-"}, shape: "[a-f0-9]{40}",
		src: "https://www.pulumi.com/docs/pulumi-cloud/access-management/access-tokens/"},
	{kind: "doppler-token", keywords: []string{"dp.pt.", "dp.st.", "dp.sa.", "dp.ct.", "dp.scim.", "dp.audit."}, shape: "[A-Za-z0-9_.-]{40,}",
		src: "https://docs.doppler.com/reference/auth-token-formats"},
	{kind: "onepassword-service-account-token", keywords: []string{"ops_eyJ"}, shape: "[A-Za-z0-9+/=_-]{100,}",
		src: "https://developer.1password.com/docs/service-accounts/"},
	// 1Password account Secret Keys: "A3-", then 6, 11 (or 6 and 5), 5, 5
	// and 5 characters (the white paper's "Secret Key" section).
	{kind: "onepassword-secret-key", keywords: []string{"A3-"}, shape: "[A-Z0-9]{6}-[A-Z0-9]{11}-[A-Z0-9]{5}-[A-Z0-9]{5}-[A-Z0-9]{5}",
		src: "https://1passwordstatic.com/files/security/1password-white-paper.pdf"},
	{kind: "onepassword-secret-key", keywords: []string{"A3-"}, shape: "[A-Z0-9]{6}-[A-Z0-9]{6}-[A-Z0-9]{5}-[A-Z0-9]{5}-[A-Z0-9]{5}-[A-Z0-9]{5}",
		src: "https://support.1password.com/secret-key/"},
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
	// Grafana's legacy API keys: the base64 of {"k":"…","n":"…","id":…},
	// so always "eyJrIjoi" (apikeygen.go); padded.
	{kind: "grafana-api-key", keywords: []string{"eyJrIjoi"}, shape: "[A-Za-z0-9+/=]{40,}",
		src: "https://github.com/grafana/grafana/blob/main/pkg/components/apikeygen/apikeygen.go"},
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
	// Microsoft documents the pattern in its credential-scanning type for
	// Entra client secrets (3 characters, a digit, "Q~", 31 to 34 more);
	// the Entra page itself gives none.
	{kind: "azure-ad-client-secret", keywords: []string{"0Q~", "1Q~", "2Q~", "3Q~", "4Q~", "5Q~", "6Q~", "7Q~", "8Q~", "9Q~"},
		shape: "[A-Za-z0-9_.~-]{31,34}", need: "A-Za-z0-9_.~-",
		src: "https://learn.microsoft.com/en-us/purview/sit-defn-azure-ad-client-secret"},
	// Amazon Bedrock API keys: long-term "ABSK" and the base64 of
	// "BedrockAPIKey-…"; short-term "bedrock-api-key-" and the base64 of a
	// presigned "bedrock.amazonaws.com/?Action=CallWithBearerToken…" URL.
	{kind: "aws-bedrock-api-key", keywords: []string{"ABSK"}, shape: "[A-Za-z0-9+/=]{100,}",
		src: "https://docs.aws.amazon.com/bedrock/latest/userguide/api-keys-how.html"},
	{kind: "aws-bedrock-api-key", keywords: []string{"bedrock-api-key-YmVkcm9jay5hbWF6b25hd3MuY29t"}, shape: "[A-Za-z0-9+/=]{40,}",
		src: "https://docs.aws.amazon.com/bedrock/latest/userguide/api-keys-how.html"},
	// Adobe Developer Console client secrets: "p8e-" and 32 base64url
	// characters (secrets the console issued, as published by mistake, hold
	// "-" and "_": the rule sets' [a-z0-9]{32} misses those). Adobe's page
	// describes the credential, not its form.
	{kind: "adobe-client-secret", keywords: []string{"p8e-"}, shape: "[A-Za-z0-9_-]{32}",
		src: "https://developer.adobe.com/developer-console/docs/guides/authentication/ServerToServerAuthentication/implementation"},
	{kind: "alibaba-access-key-id", keywords: []string{"LTAI"}, shape: "[A-Za-z0-9]{12,20}",
		src: "https://www.alibabacloud.com/help/en/ram/user-guide/create-an-accesskey-pair"},
	{kind: "tencent-secret-id", keywords: []string{"AKID"}, shape: "[A-Za-z0-9]{32}",
		src: "https://www.tencentcloud.com/document/product/598/32675"},
	{kind: "yandex-oauth-token", keywords: []string{"y0_"}, shape: "[A-Za-z0-9_-]{50,}",
		src: "https://yandex.cloud/en/docs/iam/concepts/authorization/oauth-token"},
	{kind: "yandex-api-key", keywords: []string{"AQVN"}, shape: "[A-Za-z0-9_-]{35,38}",
		src: "https://yandex.cloud/en/docs/iam/concepts/authorization/api-key"},

	// AI providers.
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
	{kind: "square-access-token", keywords: []string{"sq0atp-", "sq0atb-"}, shape: "[A-Za-z0-9_-]{22}",
		src: "https://developer.squareup.com/docs/build-basics/access-tokens"},
	{kind: "square-application-secret", keywords: []string{"sq0csp-"}, shape: "[A-Za-z0-9_-]{43}",
		src: "https://developer.squareup.com/docs/build-basics/access-tokens"},
	{kind: "braintree-access-token", keywords: []string{"$production$", "$sandbox$"}, shape: "[a-z0-9]{16}$[a-f0-9]{32}", need: "a-z",
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

	// Test-mode secret keys: they reach the account's test data (and its
	// settings, webhooks and team), so they are masked like live ones;
	// publishable keys (pk_test_, FLWPUBK_TEST-, Lob's test_pub_) are not.
	{kind: "stripe-test-secret-key", keywords: []string{"sk_test_", "rk_test_"}, shape: "[A-Za-z0-9]{20,}",
		src: "https://docs.stripe.com/keys#obtain-api-keys"},
	{kind: "shippo-test-token", keywords: []string{"shippo_test_"}, shape: "[a-f0-9]{40}",
		src: "https://docs.goshippo.com/docs/guides_general/authentication/"},
	{kind: "duffel-test-token", keywords: []string{"duffel_test_"}, shape: "[A-Za-z0-9_-]{43}",
		src: "https://duffel.com/docs/api/overview/making-requests/authentication"},
	{kind: "easypost-test-api-key", keywords: []string{"EZTK"}, shape: "[A-Za-z0-9]{54}",
		src: "https://docs.easypost.com/docs/authentication"},
	{kind: "flutterwave-test-secret-key", keywords: []string{"FLWSECK_TEST-"}, shape: "[A-Za-z0-9]{12,32}",
		src: "https://developer.flutterwave.com/docs/authentication"},
	{kind: "plaid-access-token", keywords: []string{"access-sandbox-", "access-development-", "access-production-"},
		shape: "[a-f0-9]{8}-[a-f0-9]{4}-[a-f0-9]{4}-[a-f0-9]{4}-[a-f0-9]{12}",
		src:   "https://plaid.com/docs/api/items/#itempublic_tokenexchange"},
	{kind: "paddle-api-key", keywords: []string{"pdl_live_apikey_", "pdl_sdbx_apikey_"}, shape: "[A-Za-z0-9_]{40,}",
		src: "https://developer.paddle.com/api-reference/about/api-keys"},

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
	// Airtable personal access tokens: "pat", a 14-character id, ".", and
	// 64 hex digits.
	{kind: "airtable-token", keywords: []string{"pat"}, shape: "[A-Za-z0-9]{14}.[a-f0-9]{64}",
		src: "https://airtable.com/developers/web/guides/personal-access-tokens"},
	// HubSpot private app access tokens: "pat-", the region, a UUID.
	{kind: "hubspot-access-token", keywords: []string{"pat-na1-", "pat-na2-", "pat-eu1-", "pat-ap1-"},
		shape: "[a-f0-9]{8}-[a-f0-9]{4}-[a-f0-9]{4}-[a-f0-9]{4}-[a-f0-9]{12}",
		src:   "https://developers.hubspot.com/docs/api/private-apps"},
	// SettleMint personal and application access tokens, as the SDK's
	// schema tells them (no length given: 16, the shortest seen, is a lower
	// bound), and service access tokens (sm_sat_) as the rule sets list
	// them.
	{kind: "settlemint-token", keywords: []string{"sm_pat_", "sm_aat_", "sm_sat_"}, shape: "[A-Za-z0-9]{16,}",
		src: "https://github.com/settlemint/sdk/blob/main/sdk/utils/src/validation/access-token.schema.ts"},
	// PostHog personal API keys (phx_); project keys (phc_) are public by
	// design, written into every page that sends events, and stay.
	{kind: "posthog-personal-api-key", keywords: []string{"phx_"}, shape: "[A-Za-z0-9]{30,}",
		src: "https://posthog.com/docs/api#private-endpoint-authentication"},
	// 42 Intra application secrets ("u-s4t2ud-…" is the public uid).
	{kind: "intra42-client-secret", keywords: []string{"s-s4t2ud-", "s-s4t2af-"}, shape: "[a-f0-9]{64}",
		src: "https://api.intra.42.fr/apidoc/guides/getting_started"},
	// Authress service client access keys: client id, key id, ".acc_" or
	// ".acc-", account id, private key. The span starts at ".acc": the ids
	// before it are no secret (a span never starts before its keyword).
	{kind: "authress-access-key", keywords: []string{".acc_", ".acc-"}, shape: "[A-Za-z0-9-]{10,32}.[A-Za-z0-9+/_=-]{30,120}", need: shAlnum,
		src: "https://authress.io/knowledge-base/docs/authorization/service-clients/secrets-scanning/"},
	// Facebook/Meta access tokens: "EAA" and 100 or more alphanumerics (the
	// documentation's examples; a user token is some 200). Square's EAAA
	// tokens are 64 bytes, far shorter.
	{kind: "facebook-access-token", keywords: []string{"EAA"}, shape: "[A-Za-z0-9]{100,}",
		src: "https://developers.facebook.com/docs/facebook-login/guides/access-tokens/"},
	// A JWT encoded in base64 once more (a Kubernetes Secret's data, a
	// config blob): "ZXlK" is the base64 of "eyJ".
	{kind: "jwt-base64", keywords: []string{"ZXlK"}, shape: "[A-Za-z0-9+/=]{60,}",
		src: "https://www.rfc-editor.org/rfc/rfc7519#section-3"},
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

// fullCatalogue is the whole built-in catalogue: catalogue with the shape rows
// inserted (withShapes). Built at first use, not in the package's init:
// a run that compiles no policy (capwrap --version, a verb, the watchdog)
// does not pay for it (about 1 ms and 390 allocations, issue 28).
var fullCatalogue = sync.OnceValue(func() []catalogueEntry { return withShapes(builtinCatalogue(), shapeRows) })
