<?php
/**
 * @package ServicePay\WooCommerce
 */

namespace ServicePay\WooCommerce\Tests;

/**
 * The gateway pointed at a stub ServicePay for one test: its settings get a test key and an API URL nothing
 * answers (`http://servicepay.invalid`), and WordPress's HTTP calls there are answered by the using test's own
 * `service( $pre, $args, $url )` (`pre_http_request`). The settings as they were come back afterwards.
 */
trait StubService {

	/** @var mixed The gateway's settings before the test (null: there were none). */
	private $settings_before;

	/** In setUp(): the stub service in place. */
	private function use_stub_service(): void {
		$this->settings_before = get_option( 'woocommerce_servicepay_settings', null );
		update_option(
			'woocommerce_servicepay_settings',
			array_merge(
				is_array( $this->settings_before ) ? $this->settings_before : array(),
				array(
					'test_secret_key' => 'sk_test_AbCdEfGhIjKlMnOpQrStUvWxYz012345',
					'api_url'         => 'http://servicepay.invalid',
				)
			)
		);
		add_filter( 'pre_http_request', array( $this, 'service' ), 10, 3 );
	}

	/** In tearDown(): the stub gone, the settings as they were. */
	private function drop_stub_service(): void {
		remove_filter( 'pre_http_request', array( $this, 'service' ), 10 );
		null === $this->settings_before
			? delete_option( 'woocommerce_servicepay_settings' )
			: update_option( 'woocommerce_servicepay_settings', $this->settings_before );
	}
}
