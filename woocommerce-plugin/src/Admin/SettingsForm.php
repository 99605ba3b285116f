<?php
/**
 * The gateway's settings form: its fields, the checks on save, and what the page then says.
 *
 * @package ServicePay\WooCommerce
 */

namespace ServicePay\WooCommerce\Admin;

use ServicePay\WooCommerce\Api\AddressCheck;
use ServicePay\WooCommerce\Api\ApiClient;
use ServicePay\WooCommerce\Api\ApiException;
use ServicePay\WooCommerce\Api\ServiceProfile;
use ServicePay\WooCommerce\Logger;
use ServicePay\WooCommerce\Security\ApiKey;
use ServicePay\WooCommerce\Settings;
use ServicePay\WooCommerce\Webhooks\EndpointRegistrar;

defined( 'ABSPATH' ) || exit;

/**
 * Mixed into `Gateway` (WooCommerce looks the `generate_*_html` and `validate_*_field` methods up on the
 * gateway object). On save, the API address is checked first (`AddressCheck`: does ServicePay answer there?),
 * then each pasted key against that address; a refused value keeps the saved one and the page says so. Then the
 * webhook endpoint is registered and the service's currencies are read (`ServiceProfile`). Every outcome is a
 * notice of the plugin's own (`SettingsNotices`), so WooCommerce's "Your settings have been saved." stays
 * visible, as it is true: the form was saved, with the refused values kept as they were.
 */
trait SettingsForm {

	/**
	 * The API address this save keeps: the posted one when ServicePay answers there, else the saved one. Null
	 * until the save's first field asks.
	 *
	 * @var string|null
	 */
	private ?string $checked_api_url = null;

	/**
	 * False when ServicePay does not answer at the address this save keeps (null: not known to fail).
	 *
	 * @var bool|null
	 */
	private ?bool $address_serves = null;

	/** The settings form (stored in `woocommerce_servicepay_settings`). */
	public function init_form_fields(): void {
		$defaults          = Settings::DEFAULTS;
		$this->form_fields = array(
			'enabled'         => array(
				'title'   => __( 'Enable/Disable', 'servicepay-woocommerce' ),
				'type'    => 'checkbox',
				'label'   => __( 'Accept bank transfers with ServicePay', 'servicepay-woocommerce' ),
				'default' => 'no',
			),
			'title'           => array(
				'title'       => __( 'Title', 'servicepay-woocommerce' ),
				'type'        => 'safe_text',
				'description' => __( 'What customers see at checkout.', 'servicepay-woocommerce' ),
				'default'     => __( 'Bank transfer', 'servicepay-woocommerce' ),
				'desc_tip'    => true,
			),
			'description'     => array(
				'title'   => __( 'Description', 'servicepay-woocommerce' ),
				'type'    => 'textarea',
				'default' => __( 'Pay by bank transfer to a one-time account number. Your order is confirmed the moment the money arrives.', 'servicepay-woocommerce' ),
			),
			'testmode'        => array(
				'title'       => __( 'Test mode', 'servicepay-woocommerce' ),
				'type'        => 'checkbox',
				'label'       => __( 'Use the test key (no real money moves)', 'servicepay-woocommerce' ),
				'default'     => 'yes',
				'description' => __( 'Untick to take real payments with the live key.', 'servicepay-woocommerce' ),
			),
			'test_secret_key' => array(
				'title'       => __( 'Test secret key', 'servicepay-woocommerce' ),
				'type'        => 'servicepay_secret',
				'description' => __( 'Starts with sk_test_. Find it in your ServicePay dashboard.', 'servicepay-woocommerce' ),
				'default'     => '',
			),
			'live_secret_key' => array(
				'title'       => __( 'Live secret key', 'servicepay-woocommerce' ),
				'type'        => 'servicepay_secret',
				'description' => __( 'Starts with sk_live_. Works once your business is approved (KYC).', 'servicepay-woocommerce' ),
				'default'     => '',
			),
			'api_url'         => array(
				'title'       => __( 'API address', 'servicepay-woocommerce' ),
				'type'        => 'text',
				'description' => __( 'Checked when you save: ServicePay must answer there.', 'servicepay-woocommerce' ),
				'default'     => $defaults['api_url'],
			),
			'test_widget_url' => array(
				'title'   => __( 'Checkout host (test)', 'servicepay-woocommerce' ),
				'type'    => 'text',
				'default' => $defaults['test_widget_url'],
			),
			'live_widget_url' => array(
				'title'   => __( 'Checkout host (live)', 'servicepay-woocommerce' ),
				'type'    => 'text',
				'default' => $defaults['live_widget_url'],
			),
		);
	}

	/**
	 * The page: the heading, then the plugin's notices (what the save did, and whether the store's currency can
	 * be paid by bank transfer), then the form.
	 */
	public function admin_options() {
		echo '<h2>' . esc_html( $this->get_method_title() );
		wc_back_link( __( 'Return to payments', 'woocommerce' ), admin_url( 'admin.php?page=wc-settings&tab=checkout' ) ); // phpcs:ignore WordPress.WP.I18n.TextDomainMismatch -- WooCommerce's own link text.
		echo '</h2>';
		echo wp_kses_post( wpautop( $this->get_method_description() ) );
		$this->say_where_bank_transfer_works();
		SettingsNotices::render();
		echo '<table class="form-table">' . $this->generate_settings_html( $this->get_form_fields(), false ) . '</table>'; // phpcs:ignore WordPress.Security.EscapeOutput.OutputNotEscaped -- WooCommerce's own escaped markup.
	}

	/**
	 * A key field that never prints the key: empty, with the saved key's prefix and last four beside it.
	 *
	 * @param string              $key  Field key.
	 * @param array<string,mixed> $data Field definition.
	 */
	public function generate_servicepay_secret_html( $key, $data ): string {
		$field_key = $this->get_field_key( $key );
		$saved     = (string) $this->get_option( $key );
		$note      = '' === $saved
			/* translators: shown under an empty key field */
			? __( 'No key saved.', 'servicepay-woocommerce' )
			/* translators: %s: the key's prefix and last four characters */
			: sprintf( __( 'Saved: %s. Leave empty to keep it.', 'servicepay-woocommerce' ), ApiKey::mask( $saved ) );
		ob_start();
		?>
		<tr valign="top">
			<th scope="row" class="titledesc"><label for="<?php echo esc_attr( $field_key ); ?>"><?php echo esc_html( (string) $data['title'] ); ?></label></th>
			<td class="forminp">
				<input class="input-text regular-input" type="password" autocomplete="off" spellcheck="false"
					name="<?php echo esc_attr( $field_key ); ?>" id="<?php echo esc_attr( $field_key ); ?>" value=""
					placeholder="<?php echo esc_attr( '' === $saved ? '' : ApiKey::mask( $saved ) ); ?>" />
				<p class="description"><?php echo esc_html( $note . ' ' . (string) $data['description'] ); ?></p>
			</td>
		</tr>
		<?php
		return (string) ob_get_clean();
	}

	/**
	 * Checks a pasted key: kind, environment, shape, then the service itself. An empty field keeps the saved
	 * key; a refused key is not saved (the previous one stays) and the page says why.
	 *
	 * @param string $key   Field key (`test_secret_key` or `live_secret_key`).
	 * @param mixed  $value Posted value.
	 */
	public function validate_servicepay_secret_field( $key, $value ): string {
		$old      = (string) $this->get_option( $key );
		$value    = trim( (string) $value );
		$expected = 'live_secret_key' === $key ? 'live' : 'test';
		if ( '' === $value || $value === $old ) {
			return $old;
		}
		$error = $this->key_shape_problem( $value, $expected ) ?? $this->check_with_service( $value, $expected );
		if ( null !== $error ) {
			SettingsNotices::error(
				sprintf(
					/* translators: 1: test or live, 2: why it was refused, 3: what is kept */
					__( 'The %1$s secret key was not saved: %2$s %3$s', 'servicepay-woocommerce' ),
					$expected,
					$error,
					'' === $old ? __( 'No key is saved.', 'servicepay-woocommerce' ) : __( 'The previous key is kept.', 'servicepay-woocommerce' )
				)
			);
			return $old;
		}
		return $value;
	}

	/**
	 * The API address: kept only when ServicePay answers there (checked once per save, before the keys).
	 *
	 * @param string $key   Field key.
	 * @param mixed  $value Posted value.
	 */
	public function validate_api_url_field( $key, $value ): string {
		unset( $key, $value );
		return $this->checked_api_url();
	}

	/**
	 * Saves, then registers the webhook endpoint for each environment with a key, then reads which currencies
	 * the service takes.
	 *
	 * @return bool Whether the settings were saved.
	 */
	public function process_admin_options() {
		$this->checked_api_url = null;
		$this->address_serves  = null;
		$saved                 = parent::process_admin_options();
		$settings              = Settings::load();
		// Nothing answers at the address: its notice said so, and asking again would only wait for nothing.
		if ( false !== $this->address_serves ) {
			$this->register_webhooks( $settings );
			$this->read_currencies( $settings );
		}
		return $saved;
	}

	/**
	 * The address this save keeps: the posted one if ServicePay answers there; else the saved one, and the page
	 * says why. Asked once per save, by the first field that needs it.
	 */
	private function checked_api_url(): string {
		if ( null !== $this->checked_api_url ) {
			return $this->checked_api_url;
		}
		$saved  = Settings::load()->api_url();
		$posted = $this->get_post_data()[ $this->get_field_key( 'api_url' ) ] ?? null;
		$posted = null === $posted ? $saved : untrailingslashit( trim( stripslashes( (string) $posted ) ) );
		$posted = '' === $posted ? Settings::DEFAULTS['api_url'] : $posted;
		$check  = AddressCheck::check( $posted );
		if ( $check['serves'] ) {
			$this->address_serves = true;
			if ( '' !== $check['problem'] ) {
				/* translators: 1: API address, 2: what is wrong */
				SettingsNotices::warning( sprintf( __( 'ServicePay was found at %1$s, but %2$s. Customers cannot pay by bank transfer until it can.', 'servicepay-woocommerce' ), $posted, $check['problem'] ) );
			}
			$this->checked_api_url = $posted;
			return $posted;
		}
		if ( $posted !== $saved ) {
			/* translators: 1: the address typed, 2: what is wrong there, 3: the address kept */
			SettingsNotices::error( sprintf( __( 'The API address was not changed: ServicePay does not answer at %1$s (%2$s). It is still %3$s.', 'servicepay-woocommerce' ), $posted, $check['problem'], $saved ) );
		} else {
			$this->address_serves = false;
			/* translators: 1: API address, 2: what is wrong there */
			SettingsNotices::error( sprintf( __( 'ServicePay cannot be reached at %1$s (%2$s). Until it can, customers cannot pay by bank transfer and this shop is not registered for payment notifications. Check the address, or that ServicePay is running, and save again.', 'servicepay-woocommerce' ), $posted, $check['problem'] ) );
		}
		$this->checked_api_url = $saved;
		return $saved;
	}

	/**
	 * Why a pasted key cannot be the field's key, from its shape alone (no request); null when it may be.
	 *
	 * @param string $value    The key.
	 * @param string $expected `test` or `live`.
	 */
	private function key_shape_problem( string $value, string $expected ): ?string {
		switch ( ApiKey::kind( $value ) ) {
			case 'publishable':
				/* translators: %s: test or live */
				return sprintf( __( 'That is a publishable key (pk_…). The plugin needs your %s secret key, which starts with sk_.', 'servicepay-woocommerce' ), $expected );
			case 'client_secret':
				return __( 'That is a checkout client secret (cs_…), not an API key. Paste your secret key, which starts with sk_.', 'servicepay-woocommerce' );
			case 'secret':
				if ( ApiKey::environment( $value ) !== $expected ) {
					/* translators: 1: the field's environment, 2: the key's environment */
					return sprintf( __( 'That is a %2$s key, but this field takes the %1$s key (sk_%1$s_…).', 'servicepay-woocommerce' ), $expected, (string) ApiKey::environment( $value ) );
				}
				if ( ! ApiKey::is_well_formed_secret( $value ) ) {
					return __( 'That key is incomplete: copy the whole key from your ServicePay dashboard.', 'servicepay-woocommerce' );
				}
				return null;
			default:
				return __( 'That does not look like a ServicePay secret key (sk_test_… or sk_live_…).', 'servicepay-woocommerce' );
		}
	}

	/**
	 * Asks the service who the key belongs to, at the address this save keeps; why it cannot be used, or null.
	 *
	 * @param string $secret_key Key.
	 * @param string $expected   `test` or `live`.
	 */
	private function check_with_service( string $secret_key, string $expected ): ?string {
		$api_url = $this->checked_api_url();
		try {
			$profile = ( new ApiClient( $api_url, $secret_key ) )->profile();
		} catch ( ApiException $error ) {
			switch ( $error->error_code ) {
				case 'invalid_api_key':
					return __( 'ServicePay does not know that key. Copy it again from your dashboard.', 'servicepay-woocommerce' );
				case 'api_key_revoked':
					return __( 'That key was rolled and no longer works. Paste the current key from your dashboard.', 'servicepay-woocommerce' );
				case 'kyc_required':
					SettingsNotices::warning( __( 'The live key is saved, but it works only once ServicePay has approved your business (KYC).', 'servicepay-woocommerce' ) );
					return null;
				case 'connection_error':
					/* translators: %s: why ServicePay could not be reached */
					return sprintf( __( 'it could not be checked: %s', 'servicepay-woocommerce' ), $error->getMessage() );
				default:
					/* translators: 1: message from the service, 2: request id */
					return sprintf( __( 'ServicePay refused the key: %1$s (request %2$s).', 'servicepay-woocommerce' ), $error->getMessage(), $error->request_id );
			}
		}
		if ( ( $profile['environment'] ?? '' ) !== $expected ) {
			/* translators: 1: the field's environment, 2: the key's environment */
			return sprintf( __( 'ServicePay says that key belongs to the %2$s environment, not %1$s.', 'servicepay-woocommerce' ), $expected, (string) ( $profile['environment'] ?? '?' ) );
		}
		return null;
	}

	/**
	 * Registers (or updates) the shop's webhook endpoint for each environment with a key, and says how it went.
	 *
	 * @param Settings $settings The settings as saved.
	 */
	private function register_webhooks( Settings $settings ): void {
		foreach ( array( 'test', 'live' ) as $environment ) {
			$key = $settings->get( $environment . '_secret_key' );
			if ( '' === $key ) {
				continue;
			}
			try {
				$endpoint = EndpointRegistrar::register( new ApiClient( $settings->api_url(), $key ), $environment );
				SettingsNotices::success(
					/* translators: 1: test or live, 2: endpoint id */
					sprintf( __( 'ServicePay (%1$s) will notify this shop of payments: webhook endpoint %2$s.', 'servicepay-woocommerce' ), $environment, $endpoint['id'] )
				);
			} catch ( ApiException $error ) {
				Logger::error( 'webhook registration failed', array( 'environment' => $environment, 'code' => $error->error_code, 'requestId' => $error->request_id ) );
				SettingsNotices::error(
					'connection_error' === $error->error_code
						/* translators: 1: test or live, 2: why ServicePay could not be reached */
						? sprintf( __( 'ServicePay (%1$s) could not register this shop for payment notifications: %2$s Until it can be reached, customers cannot pay by bank transfer and orders are not confirmed; save again once it can.', 'servicepay-woocommerce' ), $environment, $error->getMessage() )
						/* translators: 1: test or live, 2: message from the service */
						: sprintf( __( 'ServicePay (%1$s) could not register this shop for payment notifications: %2$s Orders are still confirmed when customers come back from paying and by a check every few minutes.', 'servicepay-woocommerce' ), $environment, $error->getMessage() )
				);
			}
		}
	}

	/**
	 * Reads which currencies the service takes (with the active key), for the checkout to offer bank transfer
	 * only where it works.
	 *
	 * @param Settings $settings The settings as saved.
	 */
	private function read_currencies( Settings $settings ): void {
		if ( '' === $settings->secret_key() ) {
			return;
		}
		$error = ServiceProfile::fetch( $settings );
		if ( null !== $error && 'connection_error' !== $error->error_code ) {
			/* translators: %s: message from the service */
			SettingsNotices::warning( sprintf( __( 'ServicePay did not say which currencies it takes (%s), so bank transfer is not offered at checkout until it does.', 'servicepay-woocommerce' ), $error->getMessage() ) );
		}
	}

	/** Tells the shop owner when bank transfer is not offered at checkout because of the store's currency. */
	private function say_where_bank_transfer_works(): void {
		$settings = Settings::load();
		if ( '' === $settings->secret_key() ) {
			return;
		}
		$currency   = get_woocommerce_currency();
		$currencies = ServiceProfile::currencies( $settings->environment() );
		switch ( ServiceProfile::refusal( $settings->environment(), $currency ) ) {
			case 'unknown':
				SettingsNotices::warning( __( 'ServicePay has not said yet which currencies it takes, so bank transfer is not offered at checkout. Save the settings once ServicePay can be reached.', 'servicepay-woocommerce' ) );
				return;
			case 'currency':
				SettingsNotices::warning(
					sprintf(
						/* translators: 1: the store's currency, 2: the currencies ServicePay takes */
						__( 'Your store\'s currency is %1$s, which ServicePay does not take (it takes %2$s), so bank transfer is not offered at checkout.', 'servicepay-woocommerce' ),
						$currency,
						implode( ', ', array_keys( $currencies ?? array() ) )
					)
				);
				return;
		}
	}
}
