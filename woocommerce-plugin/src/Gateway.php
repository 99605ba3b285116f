<?php
/**
 * The WooCommerce payment gateway `servicepay`.
 *
 * @package ServicePay\WooCommerce
 */

namespace ServicePay\WooCommerce;

use ServicePay\WooCommerce\Api\ApiClient;
use ServicePay\WooCommerce\Api\ApiException;
use ServicePay\WooCommerce\Checkout\CheckoutController;
use ServicePay\WooCommerce\Security\ApiKey;
use ServicePay\WooCommerce\Webhooks\EndpointRegistrar;
use ServicePay\WooCommerce\Webhooks\EndpointStore;

defined( 'ABSPATH' ) || exit;

/**
 * Settings, the classic checkout and `process_payment`. The order is left pending by `process_payment`:
 * it is paid only when the service says so (a verified webhook, the return from the widget, or the check).
 */
class Gateway extends \WC_Payment_Gateway {

	public const ID = 'servicepay';

	/** Sets the gateway up. */
	public function __construct() {
		$this->id                 = self::ID;
		$this->has_fields         = false;
		$this->method_title       = __( 'ServicePay bank transfer', 'servicepay-woocommerce' );
		$this->method_description = __( 'Customers pay by bank transfer to a one-time account number; the order is marked paid as soon as the transfer arrives.', 'servicepay-woocommerce' );
		$this->supports           = array( 'products' );
		$this->init_form_fields();
		$this->init_settings();
		$this->title       = $this->get_option( 'title' );
		$this->description = $this->get_option( 'description' );
		add_action( 'woocommerce_update_options_payment_gateways_' . $this->id, array( $this, 'process_admin_options' ) );
		add_action( 'woocommerce_receipt_' . $this->id, array( $this, 'receipt_page' ) );
	}

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
				'title'   => __( 'API address', 'servicepay-woocommerce' ),
				'type'    => 'text',
				'default' => $defaults['api_url'],
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
	 * key; a refused key is not saved (the previous one stays) and the reason is shown.
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
		$error = null;
		switch ( ApiKey::kind( $value ) ) {
			case 'publishable':
				/* translators: %s: test or live */
				$error = sprintf( __( 'That is a publishable key (pk_…). The plugin needs your %s secret key, which starts with sk_.', 'servicepay-woocommerce' ), $expected );
				break;
			case 'client_secret':
				$error = __( 'That is a checkout client secret (cs_…), not an API key. Paste your secret key, which starts with sk_.', 'servicepay-woocommerce' );
				break;
			case 'secret':
				if ( ApiKey::environment( $value ) !== $expected ) {
					/* translators: 1: the field's environment, 2: the key's environment */
					$error = sprintf( __( 'That is a %2$s key, but this field takes the %1$s key (sk_%1$s_…).', 'servicepay-woocommerce' ), $expected, (string) ApiKey::environment( $value ) );
				} elseif ( ! ApiKey::is_well_formed_secret( $value ) ) {
					$error = __( 'That key is incomplete: copy the whole key from your ServicePay dashboard.', 'servicepay-woocommerce' );
				}
				break;
			default:
				$error = __( 'That does not look like a ServicePay secret key (sk_test_… or sk_live_…).', 'servicepay-woocommerce' );
		}
		if ( null === $error ) {
			$error = $this->check_with_service( $value, $expected );
		}
		if ( null !== $error ) {
			\WC_Admin_Settings::add_error( $error );
			return $old;
		}
		return $value;
	}

	/**
	 * Asks the service who the key belongs to; an error message, or null when it is usable.
	 *
	 * @param string $secret_key Key.
	 * @param string $expected   `test` or `live`.
	 */
	private function check_with_service( string $secret_key, string $expected ): ?string {
		$api_url = (string) $this->get_field_value( 'api_url', $this->form_fields['api_url'], $this->get_post_data() );
		try {
			$profile = ( new ApiClient( '' !== $api_url ? $api_url : Settings::DEFAULTS['api_url'], $secret_key ) )->profile();
		} catch ( ApiException $error ) {
			switch ( $error->error_code ) {
				case 'invalid_api_key':
					return __( 'ServicePay does not know that key. Copy it again from your dashboard.', 'servicepay-woocommerce' );
				case 'api_key_revoked':
					return __( 'That key was rolled and no longer works. Paste the current key from your dashboard.', 'servicepay-woocommerce' );
				case 'kyc_required':
					\WC_Admin_Settings::add_message( __( 'The live key is saved, but it works only once ServicePay has approved your business (KYC).', 'servicepay-woocommerce' ) );
					return null;
				case 'connection_error':
					/* translators: %s: API address */
					return sprintf( __( 'ServicePay could not be reached at %s to check the key. Check the API address and try again.', 'servicepay-woocommerce' ), esc_html( $api_url ) );
				default:
					/* translators: 1: message from the service, 2: request id */
					return sprintf( __( 'ServicePay refused the key: %1$s (request %2$s).', 'servicepay-woocommerce' ), esc_html( $error->getMessage() ), esc_html( $error->request_id ) );
			}
		}
		if ( ( $profile['environment'] ?? '' ) !== $expected ) {
			/* translators: 1: the field's environment, 2: the key's environment */
			return sprintf( __( 'ServicePay says that key belongs to the %2$s environment, not %1$s.', 'servicepay-woocommerce' ), $expected, (string) ( $profile['environment'] ?? '?' ) );
		}
		return null;
	}

	/**
	 * Saves, then registers the webhook endpoint for each environment with a key.
	 *
	 * @return bool Whether the settings were saved.
	 */
	public function process_admin_options() {
		$saved    = parent::process_admin_options();
		$settings = Settings::load();
		foreach ( array( 'test', 'live' ) as $environment ) {
			$key = $settings->get( $environment . '_secret_key' );
			if ( '' === $key ) {
				continue;
			}
			try {
				$endpoint = EndpointRegistrar::register( new ApiClient( $settings->api_url(), $key ), $environment );
				\WC_Admin_Settings::add_message(
					sprintf(
						/* translators: 1: test or live, 2: endpoint id */
						__( 'ServicePay (%1$s) will notify this shop of payments: webhook endpoint %2$s.', 'servicepay-woocommerce' ),
						$environment,
						$endpoint['id']
					)
				);
			} catch ( ApiException $error ) {
				Logger::error( 'webhook registration failed', array( 'environment' => $environment, 'code' => $error->error_code, 'requestId' => $error->request_id ) );
				\WC_Admin_Settings::add_error(
					sprintf(
						/* translators: 1: test or live, 2: message from the service */
						__( 'ServicePay (%1$s) could not register this shop for payment notifications: %2$s Orders are still confirmed when customers return and by a check every few minutes.', 'servicepay-woocommerce' ),
						$environment,
						esc_html( $error->getMessage() )
					)
				);
			}
		}
		return $saved;
	}

	/** Offered at checkout only with a key for the active environment. */
	public function is_available() {
		return parent::is_available() && Settings::load()->is_ready();
	}

	/**
	 * Places the order without paying it. The Blocks checkout opens the widget before following the redirect
	 * (to the order-received page); the classic checkout goes to the order-pay page, which opens it.
	 *
	 * @param int $order_id Order id.
	 * @return array{result:string,redirect:string}
	 */
	public function process_payment( $order_id ) {
		$order = wc_get_order( $order_id );
		if ( ! $order instanceof \WC_Order ) {
			return array(
				'result'   => 'failure',
				'redirect' => '',
			);
		}
		$is_blocks = defined( 'REST_REQUEST' ) && REST_REQUEST;
		return array(
			'result'   => 'success',
			'redirect' => $is_blocks ? $this->get_return_url( $order ) : $order->get_checkout_payment_url( true ),
		);
	}

	/**
	 * The classic order-pay page: a button that opens the widget (and opens it at once).
	 *
	 * @param int $order_id Order id.
	 */
	public function receipt_page( $order_id ): void {
		$order = wc_get_order( $order_id );
		if ( ! $order instanceof \WC_Order || ! $order->needs_payment() ) {
			return;
		}
		Plugin::enqueue_classic_script( $order );
		echo '<div id="servicepay-pay" class="servicepay-pay">';
		echo '<p>' . esc_html__( 'Pay by bank transfer: we will show you a one-time account number and the exact amount.', 'servicepay-woocommerce' ) . '</p>';
		echo '<div class="servicepay-notice" role="alert" aria-live="polite"></div>';
		echo '<button type="button" class="button alt servicepay-open">' . esc_html__( 'Pay by bank transfer', 'servicepay-woocommerce' ) . '</button>';
		echo '</div>';
	}

	/**
	 * Data the checkout scripts need (no key, no amount).
	 *
	 * @return array<string,string>
	 */
	public static function script_data(): array {
		$settings = Settings::load();
		return array(
			'restPath' => '/' . CheckoutController::NAMESPACE,
			'nonce'    => wp_create_nonce( CheckoutController::NONCE_ACTION ),
			'title'    => $settings->get( 'title' ),
		);
	}

	/**
	 * Whether both environments' webhooks are registered (admin notices).
	 *
	 * @param string $environment Environment.
	 */
	public static function webhook_ready( string $environment ): bool {
		return EndpointStore::has_readable_secret( $environment );
	}
}
